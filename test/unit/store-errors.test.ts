/**
 * Each store adapter's classifier on the error shapes its library really produces: constructed as
 * the library constructs them (pg-protocol's DatabaseError, ioredis' ReplyError and
 * MaxRetriesPerRequestError, @clickhouse/client's ClickHouseError, chdb's typed errors), and caught
 * from the libraries talking to stand-in servers on 127.0.0.1 that misbehave the way a store does
 * during an outage (refuse, accept then close, never answer, answer a FATAL error or a proxy's 502).
 */
import { once } from "node:events";
import { createServer as createHttpServer, type Server as HttpServer } from "node:http";
import { createRequire } from "node:module";
import { createServer, type Server, type Socket } from "node:net";
import { join } from "node:path";
import { ClickHouseError, createClient } from "@clickhouse/client";
import { ReplyError } from "ioredis";
import { MaxRetriesPerRequestError } from "ioredis/built/errors/index.js";
import pg from "pg";
import { afterEach, describe, expect, it } from "vitest";
import { KvError, KvUnavailableError } from "../../src/stores/kv/port.js";
import { RedisKv, toKvError } from "../../src/stores/kv/redis.js";
import { PgSqlStore } from "../../src/stores/sql/pg.js";
import { SqlError, SqlUnavailableError, toSqlError } from "../../src/stores/sql/port.js";
import { mapChdbError } from "../../src/stores/warehouse/chdb.js";
import { ClickHouseWarehouse, mapClientError } from "../../src/stores/warehouse/clickhouse.js";
import {
  isWarehouseUnreachable,
  WarehouseAccessError,
  WarehouseError,
  WarehouseLimitError,
  WarehouseParameterError,
  WarehouseSyntaxError,
  WarehouseUnavailableError,
} from "../../src/stores/warehouse/port.js";

const toClose: { close(): unknown }[] = [];
afterEach(async () => {
  for (const c of toClose.splice(0).reverse()) await c.close();
});

/** A TCP server on a free loopback port; `onSocket` plays the misbehaving store. */
async function tcpServer(onSocket: (socket: Socket) => void): Promise<{ port: number; accepted(): number }> {
  let accepted = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    accepted++;
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => {});
    onSocket(socket);
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  toClose.push({
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(resolve));
    },
  });
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return { port: address.port, accepted: () => accepted };
}

/** A loopback port nothing listens on (bound, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  await new Promise((resolve) => server.close(resolve));
  return address.port;
}

const caught = async (p: Promise<unknown>): Promise<unknown> => {
  try {
    await p;
  } catch (err) {
    return err;
  }
  throw new Error("expected a failure");
};

describe("Postgres: toSqlError", () => {
  /** As pg-protocol's parser builds an ErrorResponse: a DatabaseError with the fields copied on. */
  const dbError = (code: string, message: string, severity = "FATAL") =>
    Object.assign(new pg.DatabaseError(message, 100, "error"), { code, severity });

  it.each([
    ["57P01", "terminating connection due to administrator command", true],
    ["57P02", "terminating connection because of crash of another server process", true],
    ["57P03", "the database system is starting up", true],
    ["57P03", "the database system is shutting down", true],
    ["57P03", "the database system is not yet accepting connections", true],
    ["57P04", 'terminating connection because database "shop" was dropped', true],
    ["57P05", "terminating connection due to idle-session timeout", true],
    ["53300", "sorry, too many clients already", true],
    ["53300", "remaining connection slots are reserved for roles with the SUPERUSER attribute", true],
    ["53200", "out of memory", true],
    ["53100", 'could not extend file "base/16384/16385": No space left on device', true],
    ["53000", "insufficient resources", true],
    ["08006", "connection failure", true],
    ["08001", "could not connect to server", true],
    ["08P01", "invalid frontend message type 0", true],
    ["58030", 'could not read block 0 in file "base/1/2": Input/output error', true],
    ["25006", "cannot execute INSERT in a read-only transaction", true],
    ["42601", 'syntax error at or near "SELEC"', false],
    ["42P01", 'relation "nowhere" does not exist', false],
    ["23505", 'duplicate key value violates unique constraint "pixels_pkey"', false],
    ["22P02", 'invalid input syntax for type integer: "x"', false],
    ["40001", "could not serialize access due to concurrent update", false],
    ["57014", "canceling statement due to statement timeout", false],
    ["53400", "configuration limit exceeded", false],
    ["28P01", 'password authentication failed for user "app"', false],
  ])("SQLSTATE %s (%s) → unavailable: %s", (code, message, outage) => {
    const err = toSqlError(dbError(code, message));
    expect(err).toBeInstanceOf(SqlError);
    expect(err instanceof SqlUnavailableError).toBe(outage);
    expect(err.code).toBe(code);
    expect(err.message).toBe(message);
  });

  it.each([
    // pg's own connection errors
    [new Error("Connection terminated unexpectedly"), true],
    [new Error("Connection terminated"), true],
    [new Error("Connection terminated due to connection timeout"), true],
    [new Error("Client has encountered a connection error and is not queryable"), true],
    [new Error("Client was closed and is not queryable"), true],
    [new Error("Query read timeout"), true],
    // pg-pool's
    [new Error("timeout exceeded when trying to connect"), true],
    [new Error("Cannot use a pool after calling end on the pool"), true],
    // PGlite's
    [new Error("PGlite is closed"), true],
    // Node socket errors, as net raises them
    [
      Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:5432"), { code: "ECONNREFUSED", errno: -111 }),
      true,
    ],
    [Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET", errno: -104 }), true],
    [Object.assign(new Error("write EPIPE"), { code: "EPIPE", errno: -32 }), true],
    [Object.assign(new Error("connect ETIMEDOUT 10.0.0.5:5432"), { code: "ETIMEDOUT" }), true],
    [Object.assign(new Error("getaddrinfo EAI_AGAIN db"), { code: "EAI_AGAIN" }), true],
    [Object.assign(new Error("connect EHOSTUNREACH 10.0.0.5:5432"), { code: "EHOSTUNREACH" }), true],
    [new TypeError("Cannot read properties of undefined"), false],
    [new Error("bind message supplies 1 parameters, but prepared statement requires 2"), false],
  ])("%s → unavailable: %s", (error, outage) => {
    expect(toSqlError(error) instanceof SqlUnavailableError).toBe(outage);
  });
});

/** The server side of the Postgres wire protocol, as much as a stand-in needs. */
const pgWire = {
  errorResponse(severity: string, code: string, message: string): Buffer {
    const fields = Buffer.concat([
      ...[
        ["S", severity],
        ["V", severity],
        ["C", code],
        ["M", message],
      ].map(([t, v]) => Buffer.from(`${t}${v}\0`)),
      Buffer.from([0]),
    ]);
    const head = Buffer.alloc(5);
    head.write("E", 0);
    head.writeInt32BE(fields.length + 4, 1);
    return Buffer.concat([head, fields]);
  },
  authOk(): Buffer {
    const b = Buffer.alloc(9);
    b.write("R", 0);
    b.writeInt32BE(8, 1);
    b.writeInt32BE(0, 5);
    return b;
  },
  readyForQuery(): Buffer {
    return Buffer.from([0x5a, 0, 0, 0, 5, 0x49]);
  },
  /** Calls `onStartup` once the startup packet is in, then `onMessage` for each later message. */
  serve(socket: Socket, onStartup: () => void, onMessage: (type: string) => void = () => {}) {
    let buf = Buffer.alloc(0);
    let started = false;
    socket.on("data", (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      for (;;) {
        if (!started) {
          if (buf.length < 4 || buf.length < buf.readInt32BE(0)) return;
          buf = buf.subarray(buf.readInt32BE(0));
          started = true;
          onStartup();
          continue;
        }
        if (buf.length < 5 || buf.length < 1 + buf.readInt32BE(1)) return;
        const type = String.fromCharCode(buf[0]!);
        buf = buf.subarray(1 + buf.readInt32BE(1));
        onMessage(type);
      }
    });
  },
};

describe("Postgres adapter against misbehaving servers", () => {
  const storeOn = (port: number, options: ConstructorParameters<typeof PgSqlStore>[1] = {}) => {
    const store = new PgSqlStore(`postgres://u:p@127.0.0.1:${port}/db`, options);
    toClose.push(store);
    return store;
  };

  it.each([
    ["57P03", "the database system is starting up"],
    ["57P03", "the database system is shutting down"],
    ["53300", "sorry, too many clients already"],
  ])("a connection refused at startup with FATAL %s → SqlUnavailableError", async (code, message) => {
    const server = await tcpServer((socket) =>
      pgWire.serve(socket, () => socket.end(pgWire.errorResponse("FATAL", code, message))),
    );
    const err = await caught(storeOn(server.port).query("SELECT 1"));
    expect(err).toBeInstanceOf(SqlUnavailableError);
    expect((err as SqlError).code).toBe(code);
  });

  it("a session ended by an administrator command (57P01) mid-query → SqlUnavailableError", async () => {
    const server = await tcpServer((socket) =>
      pgWire.serve(
        socket,
        () => socket.write(Buffer.concat([pgWire.authOk(), pgWire.readyForQuery()])),
        () =>
          socket.end(
            pgWire.errorResponse("FATAL", "57P01", "terminating connection due to administrator command"),
          ),
      ),
    );
    const err = await caught(storeOn(server.port).query("SELECT 1"));
    expect(err).toBeInstanceOf(SqlUnavailableError);
    expect((err as SqlError).code).toBe("57P01");
  });

  it("a statement error is the server answering: SqlError, not unavailable", async () => {
    const server = await tcpServer((socket) =>
      pgWire.serve(
        socket,
        () => socket.write(Buffer.concat([pgWire.authOk(), pgWire.readyForQuery()])),
        () =>
          socket.write(
            Buffer.concat([
              pgWire.errorResponse("ERROR", "42601", 'syntax error at or near "SELEC"'),
              pgWire.readyForQuery(),
            ]),
          ),
      ),
    );
    const err = await caught(storeOn(server.port).query("SELEC 1"));
    expect(err).toBeInstanceOf(SqlError);
    expect(err).not.toBeInstanceOf(SqlUnavailableError);
  });

  it.each([
    ["accepts and closes at once", (s: Socket) => s.destroy(), /Connection terminated/],
    ["accepts and never answers", () => {}, /timeout/],
  ])("a server that %s → SqlUnavailableError, within the connect timeout", async (_what, behave, text) => {
    const server = await tcpServer(behave);
    const started = Date.now();
    const err = await caught(storeOn(server.port, { connectTimeoutMs: 300 }).query("SELECT 1"));
    expect(err).toBeInstanceOf(SqlUnavailableError);
    expect((err as Error).message).toMatch(text);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it("a refused connection → SqlUnavailableError ECONNREFUSED; so does a transaction's connect", async () => {
    const store = storeOn(await closedPort());
    const q = await caught(store.query("SELECT 1"));
    expect(q).toBeInstanceOf(SqlUnavailableError);
    expect((q as SqlError).code).toBe("ECONNREFUSED");
    const tx = await caught(store.transaction(async () => 1));
    expect(tx).toBeInstanceOf(SqlUnavailableError);
  });

  it("a transaction whose BEGIN meets a dying server → SqlUnavailableError, not the raw pg error", async () => {
    const server = await tcpServer((socket) =>
      pgWire.serve(
        socket,
        () => socket.write(Buffer.concat([pgWire.authOk(), pgWire.readyForQuery()])),
        () =>
          socket.end(
            pgWire.errorResponse("FATAL", "57P01", "terminating connection due to administrator command"),
          ),
      ),
    );
    const err = await caught(storeOn(server.port).transaction(async () => 1));
    expect(err).toBeInstanceOf(SqlUnavailableError);
  });

  it("after N connection failures in a row the breaker answers at once, without connecting", async () => {
    const server = await tcpServer((s) => s.destroy());
    const store = storeOn(server.port, { breaker: { failures: 3, cooldownMs: 60_000 } });
    for (let i = 0; i < 3; i++)
      await expect(store.query("SELECT 1")).rejects.toBeInstanceOf(SqlUnavailableError);
    const seen = server.accepted();
    const err = await caught(store.query("SELECT 1"));
    expect(err).toBeInstanceOf(SqlUnavailableError);
    expect((err as SqlUnavailableError).retryAfterMs).toBeGreaterThan(59_000);
    await expect(store.transaction(async () => 1)).rejects.toBeInstanceOf(SqlUnavailableError);
    expect(server.accepted()).toBe(seen);
  });
});

describe("Redis: toKvError", () => {
  it.each([
    ["LOADING Redis is loading the dataset in memory", true],
    ["BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.", true],
    ["MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", true],
    ["TRYAGAIN Multiple keys request during rehashing of slot", true],
    ["CLUSTERDOWN The cluster is down", true],
    ["READONLY You can't write against a read only replica.", true],
    ["OOM command not allowed when used memory > 'maxmemory'.", true],
    [
      "MISCONF Redis is configured to save RDB snapshots, but it's currently unable to persist to disk.",
      true,
    ],
    ["NOREPLICAS Not enough good replicas to write.", true],
    ["BUSYGROUP Consumer Group name already exists", false],
    ["NOGROUP No such key 'pixelhouse:events' or consumer group 'g' in XREADGROUP with GROUP option", false],
    ["WRONGTYPE Operation against a key holding the wrong kind of value", false],
    ["ERR syntax error", false],
    ["ERR user_script:3: Script attempted to access nonexistent global variable 'x'", false],
    ["NOAUTH Authentication required.", false],
  ])("reply %s → unavailable: %s", (message, outage) => {
    // As ioredis' parser hands a server error reply over.
    const err = toKvError(new ReplyError(message));
    expect(err).toBeInstanceOf(KvError);
    expect(err instanceof KvUnavailableError).toBe(outage);
    expect(err.message).toBe(message);
  });

  it.each([
    [new MaxRetriesPerRequestError(0), true],
    [new Error("Connection is closed."), true],
    [new Error("Stream isn't writeable and enableOfflineQueue options is false"), true],
    [new Error("Command timed out"), true],
    [new Error("Socket timeout. Expecting data, but didn't receive any in 5000ms."), true],
    [Object.assign(new Error("connect ECONNREFUSED 127.0.0.1:6379"), { code: "ECONNREFUSED" }), true],
    [Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }), true],
    [new TypeError("ERR bad argument"), false],
  ])("%s → unavailable: %s", (error, outage) => {
    expect(toKvError(error) instanceof KvUnavailableError).toBe(outage);
  });
});

describe("Redis adapter against misbehaving servers", () => {
  const kvOn = (port: number, options: ConstructorParameters<typeof RedisKv>[2] = {}) => {
    const kv = new RedisKv(`redis://127.0.0.1:${port}`, "t:", options);
    toClose.push(kv);
    return kv;
  };

  it("a refused connection → KvUnavailableError at once", async () => {
    const kv = kvOn(await closedPort());
    const started = Date.now();
    const err = await caught(kv.get("k"));
    expect(err).toBeInstanceOf(KvUnavailableError);
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("a server that never answers → KvUnavailableError 'Command timed out' within the command timeout", async () => {
    const server = await tcpServer(() => {});
    const kv = kvOn(server.port, { commandTimeoutMs: 200 });
    const started = Date.now();
    const err = await caught(kv.takeTokens("b", { capacity: 2, refillPerSecond: 1 }));
    expect(err).toBeInstanceOf(KvUnavailableError);
    expect((err as Error).message).toBe("Command timed out");
    expect(Date.now() - started).toBeLessThan(1500);
  });

  it("after N timeouts in a row the breaker answers at once with the cool-down left", async () => {
    const server = await tcpServer(() => {});
    const kv = kvOn(server.port, { commandTimeoutMs: 100, breaker: { failures: 2, cooldownMs: 30_000 } });
    await expect(kv.get("a")).rejects.toBeInstanceOf(KvUnavailableError);
    await expect(kv.get("a")).rejects.toBeInstanceOf(KvUnavailableError);
    const started = Date.now();
    const err = await caught(kv.incr("a"));
    expect(Date.now() - started).toBeLessThan(50);
    expect(err).toBeInstanceOf(KvUnavailableError);
    expect((err as KvUnavailableError).retryAfterMs).toBeGreaterThan(29_000);
  });

  it("a closed store → KvUnavailableError 'Connection is closed.'", async () => {
    const kv = kvOn(await closedPort());
    await kv.close();
    const err = await caught(kv.get("k"));
    expect(err).toBeInstanceOf(KvUnavailableError);
    expect((err as Error).message).toBe("Connection is closed.");
  });
});

describe("ClickHouse server: the client's errors", () => {
  // As the client builds a server exception (parseError of the response body).
  const chError = (code: number, type: string, message: string) =>
    new ClickHouseError({ message, code: String(code), type });

  it.each([
    [
      202,
      "TOO_MANY_SIMULTANEOUS_QUERIES",
      "Too many simultaneous queries. Maximum: 100",
      WarehouseUnavailableError,
      false,
    ],
    [
      252,
      "TOO_MANY_PARTS",
      "Too many parts (3001). Merges are processing significantly slower than inserts",
      WarehouseUnavailableError,
      false,
    ],
    [209, "SOCKET_TIMEOUT", "Timeout exceeded while reading from socket", WarehouseUnavailableError, true],
    [210, "NETWORK_ERROR", "Connection reset by peer", WarehouseUnavailableError, true],
    [279, "ALL_CONNECTION_TRIES_FAILED", "All connection tries failed", WarehouseUnavailableError, true],
    [242, "TABLE_IS_READ_ONLY", "Table is in readonly mode", WarehouseUnavailableError, false],
    [999, "KEEPER_EXCEPTION", "Coordination error: Connection loss", WarehouseUnavailableError, false],
    [62, "SYNTAX_ERROR", "Syntax error: failed at position 1", WarehouseSyntaxError, false],
    [159, "TIMEOUT_EXCEEDED", "Timeout exceeded: elapsed 30 seconds", WarehouseLimitError, false],
    [241, "MEMORY_LIMIT_EXCEEDED", "Memory limit (total) exceeded", WarehouseLimitError, false],
    [457, "BAD_QUERY_PARAMETER", "Value x cannot be parsed as Int64", WarehouseParameterError, false],
    [497, "ACCESS_DENIED", "Not enough privileges", WarehouseAccessError, false],
  ])("code %i %s → %o (counts for the breaker: %s)", (code, type, message, cls, unreachable) => {
    const err = mapClientError(chError(code, type, message));
    expect(err).toBeInstanceOf(cls);
    expect(isWarehouseUnreachable(err)).toBe(unreachable);
  });

  /** A stand-in HTTP server in front of which the real client runs one query. */
  async function clientFailure(
    handler: (res: import("node:http").ServerResponse) => void,
    options: { requestTimeoutMs?: number; signal?: AbortSignal } = {},
  ): Promise<unknown> {
    const server: HttpServer = createHttpServer((_req, res) => handler(res));
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    toClose.push({
      close: () => {
        server.closeAllConnections();
        return new Promise((resolve) => server.close(resolve));
      },
    });
    const address = server.address();
    if (!address || typeof address === "string") throw new Error("no port");
    const client = createClient({
      url: `http://127.0.0.1:${address.port}`,
      request_timeout: options.requestTimeoutMs ?? 5000,
      log: { level: 127 as never },
    });
    toClose.push(client);
    return caught(
      client.query({
        query: "SELECT 1",
        format: "JSONEachRow",
        ...(options.signal ? { abort_signal: options.signal } : {}),
      }),
    );
  }

  it.each([
    [
      502,
      "<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center><hr><center>nginx</center></body></html>",
    ],
    [503, "upstream connect error or disconnect/reset before headers. reset reason: connection failure"],
    [504, "<html><body><h1>504 Gateway Time-out</h1>The server didn't respond in time.</body></html>"],
  ])("a proxy's %i page → unavailable and unreachable", async (status, page) => {
    const raw = await clientFailure((res) => {
      res.writeHead(status, { "content-type": "text/html" });
      res.end(page);
    });
    const err = mapClientError(raw);
    expect(err).toBeInstanceOf(WarehouseUnavailableError);
    expect(isWarehouseUnreachable(err)).toBe(true);
  });

  it("the server's TOO_MANY_SIMULTANEOUS_QUERIES answer → unavailable, not counted by the breaker", async () => {
    const raw = await clientFailure((res) => {
      res.writeHead(500, { "x-clickhouse-exception-code": "202" });
      res.end(
        "Code: 202. DB::Exception: Too many simultaneous queries for user console. Current: 2, maximum: 2. (TOO_MANY_SIMULTANEOUS_QUERIES) (version 25.8.2.29 (official build))\n",
      );
    });
    expect(raw).toBeInstanceOf(ClickHouseError);
    const err = mapClientError(raw);
    expect(err).toBeInstanceOf(WarehouseUnavailableError);
    expect(err.clickhouseCode).toBe(202);
    expect(isWarehouseUnreachable(err)).toBe(false);
  });

  it("a server that never answers → the client's 'Timeout error.' → unavailable", async () => {
    const raw = await clientFailure(() => {}, { requestTimeoutMs: 200 });
    expect((raw as Error).message).toBe("Timeout error.");
    expect(isWarehouseUnreachable(mapClientError(raw))).toBe(true);
  });

  it("the caller's abort → a cancelled query (a limit), never an outage", async () => {
    const abort = new AbortController();
    setImmediate(() => abort.abort());
    const raw = await clientFailure(() => {}, { signal: abort.signal });
    const err = mapClientError(raw);
    expect(err).toBeInstanceOf(WarehouseLimitError);
    expect(isWarehouseUnreachable(err)).toBe(false);
  });

  it("a refused connection → unavailable", async () => {
    const client = createClient({
      url: `http://127.0.0.1:${await closedPort()}`,
      log: { level: 127 as never },
    });
    toClose.push(client);
    const err = mapClientError(await caught(client.query({ query: "SELECT 1" })));
    expect(err).toBeInstanceOf(WarehouseUnavailableError);
    expect((err.cause as { code?: string }).code).toBe("ECONNREFUSED");
  });

  it("the adapter's breaker opens on unreachable failures only, and is shared with its readers", async () => {
    let mode: "ok" | "busy" | "down" = "ok";
    let requests = 0;
    const server = createHttpServer((req, res) => {
      requests++;
      req.resume();
      if (mode === "ok") res.end("");
      else if (mode === "busy") {
        res.writeHead(500, { "x-clickhouse-exception-code": "202" });
        res.end(
          "Code: 202. DB::Exception: Too many simultaneous queries. (TOO_MANY_SIMULTANEOUS_QUERIES) (version 25.8)\n",
        );
      } else {
        res.writeHead(502);
        res.end("<html>502 Bad Gateway</html>");
      }
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    toClose.push({
      close: () => {
        server.closeAllConnections();
        return new Promise((resolve) => server.close(resolve));
      },
    });
    const address = server.address();
    if (!address || typeof address === "string") throw new Error("no port");
    const store = await ClickHouseWarehouse.open({
      url: `http://127.0.0.1:${address.port}`,
      username: "default",
      password: "",
      database: "db",
      breaker: { failures: 2, cooldownMs: 60_000 },
    });
    toClose.push(store);
    const reader = await store.openReader();
    mode = "busy";
    for (let i = 0; i < 4; i++)
      await expect(store.command("SELECT 1")).rejects.toBeInstanceOf(WarehouseUnavailableError);
    mode = "down";
    await expect(store.command("SELECT 1")).rejects.toBeInstanceOf(WarehouseUnavailableError);
    await expect(reader.command("SELECT 1")).rejects.toBeInstanceOf(WarehouseUnavailableError);
    const seen = requests;
    const err = await caught(store.insert("t", [{ a: 1 }]));
    expect((err as WarehouseUnavailableError).retryAfterMs).toBeGreaterThan(59_000);
    await expect(reader.query("SELECT 1")).rejects.toBeInstanceOf(WarehouseUnavailableError);
    expect(requests).toBe(seen);
  });
});

describe("chDB: mapChdbError", () => {
  // The package's typed errors (dist/errors.js is what its index requires; not in its exports map).
  const chdbErrors = createRequire(import.meta.url)(
    join(process.cwd(), "node_modules/chdb/dist/errors.js"),
  ) as Record<string, new (message: string, options?: { clickhouseCode?: number }) => Error>;

  it.each([
    ["ChdbClosedError", "Session is closed", undefined, WarehouseUnavailableError],
    [
      "ChdbConnectionError",
      "Cannot open a second data directory in one process",
      undefined,
      WarehouseUnavailableError,
    ],
    ["ChdbQueryError", "Code: 62. DB::Exception: Syntax error", 62, WarehouseSyntaxError],
    ["ChdbQueryError", "Code: 241. DB::Exception: Memory limit exceeded", 241, WarehouseLimitError],
    [
      "ChdbQueryError",
      "Code: 202. DB::Exception: Too many simultaneous queries",
      202,
      WarehouseUnavailableError,
    ],
    ["ChdbTimeoutError", "Query exceeded its deadline", undefined, WarehouseLimitError],
    ["ChdbAbortError", "The operation was aborted", undefined, WarehouseLimitError],
    ["ChdbBindError", "parameter x: unsupported value", undefined, WarehouseParameterError],
    ["ChdbQueryError", "Code: 1001. DB::Exception: std::exception", 1001, WarehouseError],
  ])("%s (%s) → %o", (name, message, code, cls) => {
    const Type = chdbErrors[name]!;
    const err = mapChdbError(new Type(message, code === undefined ? undefined : { clickhouseCode: code }));
    expect(err).toBeInstanceOf(cls);
    if (cls === WarehouseError) expect(err).not.toBeInstanceOf(WarehouseUnavailableError);
  });
});
