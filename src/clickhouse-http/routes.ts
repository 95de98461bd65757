import { gunzipSync, gzipSync } from "node:zlib";
import express, { type Request, type Response, Router } from "express";
import type { Logger } from "../log.js";
import { KvUnavailableError } from "../stores/kv/port.js";
import { SqlUnavailableError } from "../stores/sql/port.js";
import { WarehouseUnavailableError } from "../stores/warehouse/port.js";
import { ClickHouseHttpError, chErrors, errorBody } from "./errors.js";
import type { ClickHouseHttpService } from "./service.js";

/** Largest query body accepted (ClickHouse's max_query_size is 256 KiB; a SELECT needs no more). */
const MAX_BODY = 1024 * 1024;

const header = (req: Request, name: string) => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

/** User and key, from the headers ClickHouse clients send, Basic auth, or URL parameters. */
function credentials(req: Request, params: Record<string, string>): { user?: string; key?: string } {
  const user = header(req, "x-clickhouse-user");
  const key = header(req, "x-clickhouse-key");
  if (user !== undefined || key !== undefined) return { ...(user ? { user } : {}), ...(key ? { key } : {}) };
  const basic = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(header(req, "authorization") ?? "");
  if (basic) {
    const text = Buffer.from(basic[1]!, "base64").toString("utf8");
    const colon = text.indexOf(":");
    if (colon >= 0) return { user: text.slice(0, colon), key: text.slice(colon + 1) };
  }
  return {
    ...(params.user ? { user: params.user } : {}),
    ...(params.password ? { key: params.password } : {}),
  };
}

/** URL parameters as single strings (a repeated one keeps its last value, as ClickHouse does). */
function paramsOf(req: Request): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(req.query)) {
    const value = Array.isArray(v) ? v[v.length - 1] : v;
    if (typeof value === "string") out[k] = value;
  }
  return out;
}

async function bodyOf(req: Request): Promise<string> {
  if (req.method !== "POST") return "";
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw chErrors.badArguments(`The query is larger than ${MAX_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  const raw = Buffer.concat(chunks);
  const encoding = (header(req, "content-encoding") ?? "").toLowerCase();
  if (encoding === "gzip") {
    try {
      return gunzipSync(raw, { maxOutputLength: MAX_BODY }).toString("utf8");
    } catch {
      throw chErrors.badArguments("The body is not valid gzip, or is larger than 1 MiB unpacked");
    }
  }
  if (encoding && encoding !== "identity")
    throw chErrors.badArguments(`Unsupported Content-Encoding ${encoding}`);
  return raw.toString("utf8");
}

function isOutage(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth++) {
    if (
      e instanceof SqlUnavailableError ||
      e instanceof WarehouseUnavailableError ||
      e instanceof KvUnavailableError
    )
      return true;
  }
  return false;
}

/**
 * ClickHouse's HTTP interface: `GET|POST /` (query in `query=` and/or the body), `GET /ping`. Mounted
 * at /clickhouse on the service's port, and at / on CLICKHOUSE_HTTP_PORT (docs/bi.md).
 */
export function clickhouseRouter(service: ClickHouseHttpService, log: Logger): Router {
  const router = Router();
  router.get("/ping", (_req, res) => {
    res.type("text/plain").send("Ok.\n");
  });
  const handle = async (req: Request, res: Response) => {
    const params = paramsOf(req);
    const version = await service.engineVersion();
    const gone = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) gone.abort();
    });
    try {
      const answer = await service.run({
        params,
        body: await bodyOf(req),
        ...credentials(req, params),
        signal: gone.signal,
      });
      res.setHeader("X-ClickHouse-Query-Id", answer.queryId);
      res.setHeader("X-ClickHouse-Format", answer.format);
      res.setHeader("X-ClickHouse-Timezone", "UTC");
      res.setHeader("X-ClickHouse-Server-Display-Name", "pixelhouse");
      res.setHeader("X-ClickHouse-Summary", JSON.stringify({ ...answer.summary, result_rows: "0" }));
      res.setHeader("Content-Type", answer.contentType);
      let body = Buffer.from(answer.bytes);
      const gzip =
        params.enable_http_compression === "1" && /\bgzip\b/i.test(header(req, "accept-encoding") ?? "");
      if (gzip) {
        body = gzipSync(body);
        res.setHeader("Content-Encoding", "gzip");
      }
      res.status(200).end(body);
    } catch (err) {
      let ch: ClickHouseHttpError;
      if (err instanceof ClickHouseHttpError) ch = err;
      else if (isOutage(err)) ch = chErrors.unavailable("A store did not answer; retry the query");
      else {
        log.error({ err }, "clickhouse http endpoint: unexpected error");
        ch = new ClickHouseHttpError(1001, "STD_EXCEPTION", "Internal error", 500);
      }
      if (res.headersSent) {
        res.destroy();
        return;
      }
      res.setHeader("X-ClickHouse-Exception-Code", String(ch.code));
      if (ch.code === 516) res.setHeader("WWW-Authenticate", 'Basic realm="pixelhouse", charset="UTF-8"');
      res.status(ch.status).type("text/plain").send(errorBody(ch, version));
    }
  };
  router.get("/", handle);
  router.post("/", handle);
  return router;
}

/** The app of CLICKHOUSE_HTTP_PORT: only this interface, at `/`. */
export function clickhouseApp(service: ClickHouseHttpService, log: Logger): express.Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.use("/", clickhouseRouter(service, log));
  app.use((_req, res) => {
    res
      .status(404)
      .type("text/plain")
      .send("Not found: this port serves ClickHouse's HTTP interface (/ and /ping)\n");
  });
  return app;
}
