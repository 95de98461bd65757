import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Subscription } from "../../src/events/subscription.js";
import type { BusMessage } from "../../src/stores/bus/port.js";
import type { RedisKv } from "../../src/stores/kv/redis.js";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { eventually } from "../helpers/bus.js";
import { skipReason, TEST_DATABASE_URL, TEST_REDIS_URL } from "../helpers/env.js";

const PATH = "/accounts/api/account";

interface OutboxRow {
  id: string;
  topic: string;
  payload: Record<string, unknown>;
  published: boolean;
}

const outboxOf = async (app: TestApp, accountId: string) =>
  (
    await app.stores.sql.query<OutboxRow>(
      `SELECT id::text AS id, topic, payload, published_at IS NOT NULL AS published FROM outbox
       WHERE topic = 'events' AND payload->>'accountId' = $1 ORDER BY id`,
      [accountId],
    )
  ).rows;

const nameOf = async (app: TestApp, accountId: string) =>
  (await app.stores.sql.query<{ name: string }>("SELECT name FROM accounts WHERE id = $1", [accountId]))
    .rows[0]!.name;

describe("PATCH /accounts/api/account", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startTestApp();
  });
  afterAll(() => app?.close());

  it("renames and answers the renamed account exactly as GET does", async () => {
    const k = await app.pixelWithKey(["account:read", "account:write"]);
    const res = await app.call("PATCH", PATH, { ...k, body: { accountName: "Acme Shop 🛍" } });
    expect(res.status).toBe(200);
    const get = await app.call("GET", PATH, k);
    expect(get.body).toMatchObject({ account: { accountName: "Acme Shop 🛍" } });
    expect(res.body).toStrictEqual(get.body);
    expect(Object.keys((res.body as { account: object }).account).sort()).toStrictEqual(
      ["accountName", "admins", "createdAt", "owners"].sort(),
    );
  });

  it("writes one accountUpdated event with the key as actor, in the rename's transaction", async () => {
    const k = await app.pixelWithKey(["account:write"]);
    await app.call("PATCH", PATH, { ...k, body: { accountName: "First" } });
    await app.call("PATCH", PATH, { ...k, body: { accountName: "Second" } });
    const { rows } = await app.stores.sql.query<{ updated_at: Date }>(
      "SELECT updated_at FROM accounts WHERE id = $1",
      [k.accountId],
    );
    const rowsOut = await outboxOf(app, k.accountId);
    expect(rowsOut.map((r) => r.payload.changes)).toStrictEqual([
      { accountName: { from: "Test Shop", to: "First" } },
      { accountName: { from: "First", to: "Second" } },
    ]);
    expect(rowsOut[1]!.payload).toStrictEqual({
      type: "accountUpdated",
      accountId: k.accountId,
      pixelId: k.pixelId,
      actor: `cli:${k.keyId}`,
      changes: { accountName: { from: "First", to: "Second" } },
      occurredAt: rows[0]!.updated_at.toISOString(),
    });
    expect(rowsOut.every((r) => !r.published)).toBe(true); // no relay runs in this app
  });

  it("renaming to the current name answers 200 and emits nothing", async () => {
    const k = await app.pixelWithKey(["account:write"]);
    const res = await app.call("PATCH", PATH, { ...k, body: { accountName: "Test Shop" } });
    expect(res.status).toBe(200);
    expect((res.body as { account: { accountName: string } }).account.accountName).toBe("Test Shop");
    expect(await outboxOf(app, k.accountId)).toStrictEqual([]);
    // Same letters, other case: a real change.
    await app.call("PATCH", PATH, { ...k, body: { accountName: "test shop" } });
    expect(await outboxOf(app, k.accountId)).toHaveLength(1);
  });

  it("needs account:write, and account:read is not enough", async () => {
    const k = await app.pixelWithKey(["account:read"]);
    const res = await app.call("PATCH", PATH, { ...k, body: { accountName: "Nope" } });
    expect(res.status).toBe(403);
    expect(res.body).toStrictEqual({ message: "API key does not have the account:write scope" });
    expect(await nameOf(app, k.accountId)).toBe("Test Shop");
    expect((await app.call("PATCH", PATH, { body: { accountName: "Nope" } })).status).toBe(401);
  });

  it("refuses any other key, naming it, and changes nothing", async () => {
    const k = await app.pixelWithKey(["account:write"]);
    const res = await app.call("PATCH", PATH, {
      ...k,
      body: { accountName: "Fine", timezone: "Europe/Paris", owners: [] },
    });
    expect(res.status).toBe(400);
    expect(res.body).toStrictEqual({
      message: "Bad Request",
      errors: [
        { message: "timezone is not allowed", key: "timezone", path: ["timezone"] },
        { message: "owners is not allowed", key: "owners", path: ["owners"] },
      ],
    });
    expect(await nameOf(app, k.accountId)).toBe("Test Shop");
    expect(await outboxOf(app, k.accountId)).toStrictEqual([]);
  });

  it("refuses a missing, non-string or non-object body with a 400 naming accountName", async () => {
    const k = await app.pixelWithKey(["account:write"]);
    for (const [body, message] of [
      [{}, "accountName is required"],
      [{ accountName: null }, /^accountName: .*expected string/],
      [{ accountName: 7 }, /^accountName: .*expected string/],
    ] as const) {
      const res = await app.call("PATCH", PATH, { ...k, body });
      expect(res.status).toBe(400);
      const errors = (res.body as { errors: { key: string; message: string }[] }).errors;
      expect(errors).toHaveLength(1);
      expect(errors[0]!.key).toBe("accountName");
      expect(errors[0]!.message).toMatch(message);
    }
    expect(
      (await app.call("PATCH", PATH, { ...k, rawBody: "", headers: { "content-type": "application/json" } }))
        .status,
    ).toBe(400);
    expect((await app.call("PATCH", PATH, { ...k, body: ["x"] })).status).toBe(400);
    expect(
      (await app.call("PATCH", PATH, { ...k, rawBody: "{", headers: { "content-type": "application/json" } }))
        .status,
    ).toBe(400);
    expect(await outboxOf(app, k.accountId)).toStrictEqual([]);
  });

  // One name per class over HTTP; the unit table covers every case of each class.
  const refused: [string, string, RegExp][] = [
    ["empty", "", /1 to 100 characters long \(got 0\)/],
    ["101 characters", "x".repeat(101), /got 101/],
    ["leading whitespace", " Acme", /start or end with whitespace.*not trimmed/],
    ["trailing whitespace (NBSP)", "Acme\u00A0", /start or end with whitespace/],
    ["control character", "Ac\u0007me", /control characters \(U\+0007 at character 3\)/],
    ["zero-width space", "Ac\u200Bme", /zero-width or invisible format characters \(U\+200B/],
    ["soft hyphen", "Ac\u00ADme", /format characters \(U\+00AD/],
    ["BOM", "\uFEFFAcme", /format characters \(U\+FEFF/],
    ["ZWJ between letters", "Ac\u200Dme", /zero-width joiner only between two emoji/],
    ["right-to-left override", "Acme\u202Egnp", /bidirectional control characters \(U\+202E/],
    ["first strong isolate", "Acme\u2068x", /bidirectional control characters \(U\+2068/],
    ["Arabic letter mark", "Acme\u061Cx", /bidirectional control characters \(U\+061C/],
  ];
  it.each(refused)("refuses %s with a 400 naming accountName and why", async (_label, name, why) => {
    const k = await app.pixelWithKey(["account:write"]);
    const res = await app.call("PATCH", PATH, { ...k, body: { accountName: name } });
    expect(res.status).toBe(400);
    const body = res.body as { message: string; errors: { key: string; path: string[]; message: string }[] };
    expect(body.message).toBe("Bad Request");
    expect(body.errors).toHaveLength(1);
    expect(body.errors[0]!.key).toBe("accountName");
    expect(body.errors[0]!.path).toStrictEqual(["accountName"]);
    expect(body.errors[0]!.message).toMatch(/^accountName: /);
    expect(body.errors[0]!.message).toMatch(why);
    expect(await nameOf(app, k.accountId)).toBe("Test Shop");
  });

  it("refuses a lone surrogate sent as a JSON escape", async () => {
    const k = await app.pixelWithKey(["account:write"]);
    const res = await app.call("PATCH", PATH, {
      ...k,
      rawBody: '{"accountName":"Ac\\ud83dme"}',
      headers: { "content-type": "application/json" },
    });
    expect(res.status).toBe(400);
    expect((res.body as { errors: { message: string }[] }).errors[0]!.message).toBe(
      "accountName: must not contain a lone surrogate (U+D83D at character 3)",
    );
  });

  const accepted: [string, string][] = [
    ["letters of several scripts", "Café Ελληνικά 東京 서울 متجر"],
    ["marks and digits", "दुकान ٤٢ Cafe\u0301"],
    ["punctuation and symbols", "Smith & Sons — “Best” €£ → ©"],
    ["emoji ZWJ sequence and skin tone", "👩🏽‍💻 Dev 👨‍👩‍👧‍👦"],
    ["variation selector after an emoji, keycap, flag", "I ❤️ 1️⃣ 🇫🇷 🏳️‍🌈"],
    ["tag sequence flag", "🏴󠁧󠁢󠁳󠁣󠁴󠁿 Shop"],
    ["100 emoji (code points, not UTF-16 units)", "😀".repeat(100)],
  ];
  it.each(accepted)("accepts %s and stores it exactly", async (_label, name) => {
    const k = await app.pixelWithKey(["account:read", "account:write"]);
    const res = await app.call("PATCH", PATH, { ...k, body: { accountName: name } });
    expect(res.status).toBe(200);
    expect((res.body as { account: { accountName: string } }).account.accountName).toBe(name);
    const get = await app.call("GET", PATH, k);
    expect((get.body as { account: { accountName: string } }).account.accountName).toBe(name);
    const [row] = await outboxOf(app, k.accountId);
    expect(row!.payload.changes).toStrictEqual({ accountName: { from: "Test Shop", to: name } });
  });

  it("the service applies the name rules to every caller, not only the route", async () => {
    const k = await app.pixelWithKey(["account:write"]);
    const actor = { accountId: k.accountId, pixelId: k.pixelId, keyId: k.keyId };
    await expect(app.services.accounts.rename(actor, "Acme\u202E")).rejects.toMatchObject({
      status: 400,
      issues: [
        { key: "accountName", path: ["accountName"], message: expect.stringMatching(/bidirectional/) },
      ],
    });
    expect(await nameOf(app, k.accountId)).toBe("Test Shop");
    expect(await outboxOf(app, k.accountId)).toStrictEqual([]);
  });

  it("renames only the key's own account", async () => {
    const a = await app.pixelWithKey(["account:write"]);
    const b = await app.pixelWithKey(["account:write"]);
    await app.call("PATCH", PATH, { ...a, body: { accountName: "Only A" } });
    expect(await nameOf(app, a.accountId)).toBe("Only A");
    expect(await nameOf(app, b.accountId)).toBe("Test Shop");
    expect(await outboxOf(app, b.accountId)).toStrictEqual([]);
  });

  it("the rename and its event commit together: an outbox that refuses the event leaves the name as it was", async () => {
    const k = await app.pixelWithKey(["account:write"]);
    await app.stores.sql.exec(`
      CREATE FUNCTION refuse_outbox() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN RAISE EXCEPTION 'outbox refused'; END $$;
      CREATE TRIGGER refuse_outbox BEFORE INSERT ON outbox FOR EACH ROW EXECUTE FUNCTION refuse_outbox();`);
    try {
      const res = await app.call("PATCH", PATH, { ...k, body: { accountName: "Never" } });
      expect(res.status).toBe(500);
      expect(res.text).not.toContain("outbox refused");
    } finally {
      await app.stores.sql.exec("DROP TRIGGER refuse_outbox ON outbox; DROP FUNCTION refuse_outbox();");
    }
    expect(await nameOf(app, k.accountId)).toBe("Test Shop");
    expect(await outboxOf(app, k.accountId)).toStrictEqual([]);
  });

  it("concurrent renames each record the name they replaced", async () => {
    const k = await app.pixelWithKey(["account:write"]);
    const names = ["One", "Two", "Three", "Four"];
    const results = await Promise.all(
      names.map((accountName) => app.call("PATCH", PATH, { ...k, body: { accountName } })),
    );
    expect(results.map((r) => r.status)).toStrictEqual([200, 200, 200, 200]);
    const changes = (await outboxOf(app, k.accountId)).map(
      (r) => (r.payload.changes as { accountName: { from: string; to: string } }).accountName,
    );
    expect(changes).toHaveLength(4);
    // A chain: each event starts where the previous one ended, and the last one is the stored name.
    expect(changes[0]!.from).toBe("Test Shop");
    for (let i = 1; i < changes.length; i++) expect(changes[i]!.from).toBe(changes[i - 1]!.to);
    expect(changes.map((c) => c.to).sort()).toStrictEqual([...names].sort());
    expect(await nameOf(app, k.accountId)).toBe(changes[3]!.to);
  });

  it("is in the OpenAPI document with its body schema", async () => {
    const doc = (await app.call("GET", "/openapi.json")).body as {
      paths: Record<
        string,
        Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>
      >;
    };
    const op = doc.paths[PATH]!.patch!;
    const schema = op.requestBody!.content["application/json"]!.schema as {
      properties: Record<string, { minLength?: number; maxLength?: number }>;
      required: string[];
      additionalProperties: boolean;
    };
    expect(Object.keys(schema.properties)).toStrictEqual(["accountName"]);
    expect(schema.required).toStrictEqual(["accountName"]);
    expect(schema.additionalProperties).toBe(false);
    expect(schema.properties.accountName).toMatchObject({ minLength: 1, maxLength: 100 });
  });
});

// ---------------------------------------------------------------------------------------------
// The event on the bus, with the relay stopped and restarted

const setups: { name: string; available: boolean; options: Parameters<typeof startTestApp>[0] }[] = [
  { name: "embedded (PGlite, bus in the SQL store)", available: true, options: {} },
  {
    name: "Postgres + Redis Streams",
    available: !!TEST_DATABASE_URL && !!TEST_REDIS_URL,
    options: { sql: "postgres", kv: "redis" },
  },
];

for (const setup of setups) {
  describe.skipIf(!setup.available)(`accountUpdated on the bus: ${setup.name}`, () => {
    let app: TestApp;
    beforeAll(async () => {
      app = await startTestApp(setup.options);
    });
    afterAll(async () => {
      await app?.services.relay.stop();
      await app?.close();
    });

    /** What a consumer group has received so far (reads and acknowledges). */
    const receive = async (group: string, into: BusMessage[]) => {
      const sub = new Subscription(app.stores.bus, {
        stream: "events",
        group,
        consumer: `${group}-c`,
        handler: async (m) => {
          into.push(m);
        },
      });
      return sub.runOnce();
    };

    it("a rename made while the relay is stopped reaches a consumer group once the relay runs again", async () => {
      const k = await app.pixelWithKey(["account:write"]);
      const group = `audit-${k.pixelId.slice(-8).toLowerCase()}`;
      const received: BusMessage[] = [];
      // The group exists before the rename, and the relay ran once and stopped.
      await receive(group, received);
      app.services.relay.start();
      await app.services.relay.stop();

      const res = await app.call("PATCH", PATH, { ...k, body: { accountName: "Renamed 🚀" } });
      expect(res.status).toBe(200);
      const [row] = await outboxOf(app, k.accountId);
      expect(row!.published).toBe(false);
      expect(await receive(group, received)).toMatchObject({ delivered: 0 });

      app.services.relay.start();
      await eventually(async () => {
        await receive(group, received);
        return received.some((m) => m.key === row!.id) ? true : undefined;
      }, "the event on the bus");
      const mine = received.filter((m) => m.key === row!.id);
      expect(mine).toHaveLength(1);
      const { rows } = await app.stores.sql.query<{ updated_at: Date }>(
        "SELECT updated_at FROM accounts WHERE id = $1",
        [k.accountId],
      );
      const expected = {
        type: "accountUpdated",
        accountId: k.accountId,
        pixelId: k.pixelId,
        actor: `cli:${k.keyId}`,
        changes: { accountName: { from: "Test Shop", to: "Renamed 🚀" } },
        occurredAt: rows[0]!.updated_at.toISOString(),
      };
      expect(mine[0]!.payload).toStrictEqual(expected);
      // The documented key order, not the outbox's jsonb order.
      expect(JSON.stringify(mine[0]!.payload)).toBe(JSON.stringify(expected));
      expect((await outboxOf(app, k.accountId))[0]!.published).toBe(true);
      // A group that subscribes afterwards still gets it; this group gets nothing twice.
      const late: BusMessage[] = [];
      await receive(`${group}-late`, late);
      expect(late.filter((m) => m.key === row!.id).map((m) => m.payload)).toStrictEqual([expected]);
      expect(await receive(group, received)).toMatchObject({ delivered: 0 });
      await app.services.relay.stop();
    });

    it("a consumer that dies before acknowledging gets the event again (at-least-once)", async () => {
      const k = await app.pixelWithKey(["account:write"]);
      const group = `crashy-${k.pixelId.slice(-8).toLowerCase()}`;
      await receive(group, []); // create the group before the event
      await app.call("PATCH", PATH, { ...k, body: { accountName: "Again" } });
      app.services.relay.start();
      const [row] = await outboxOf(app, k.accountId);
      // Read without acknowledging: the consumer "dies" with the message pending.
      const first = await eventually(async () => {
        const got = await app.stores.bus.read("events", group, "dies", { count: 1000 });
        return got.find((m) => m.key === row!.id);
      }, "the first delivery");
      await app.services.relay.stop();
      const again = await app.stores.bus.read("events", group, "survivor", { claimIdleMs: 0, count: 1000 });
      const redelivered = again.find((m) => m.key === row!.id);
      expect(redelivered).toStrictEqual({ ...first, deliveries: 2 });
      await app.stores.bus.ack(
        "events",
        group,
        again.map((m) => m.id),
      );
    });

    if (setup.options?.kv === "redis") {
      it("the event sits in the Redis stream <prefix>events as JSON text in the documented shape", async () => {
        const k = await app.pixelWithKey(["account:write"]);
        await app.call("PATCH", PATH, { ...k, body: { accountName: "On Redis" } });
        const [row] = await outboxOf(app, k.accountId);
        await app.services.relay.runOnce();
        const redis = (app.stores.kv as RedisKv).client;
        const key = `${app.config.REDIS_KEY_PREFIX}events`;
        const entries = (await redis.xrange(key, "-", "+")) as [string, string[]][];
        const entry = entries.find(([, fields]) => fields[1] === row!.id);
        expect(entry).toBeDefined();
        const [, fields] = entry!;
        expect(fields[0]).toBe("key");
        expect(fields[2]).toBe("payload");
        expect(JSON.parse(fields[3]!)).toMatchObject({
          type: "accountUpdated",
          actor: `cli:${k.keyId}`,
          changes: { accountName: { from: "Test Shop", to: "On Redis" } },
        });
        expect(Object.keys(JSON.parse(fields[3]!))).toStrictEqual([
          "type",
          "accountId",
          "pixelId",
          "actor",
          "changes",
          "occurredAt",
        ]);
      });
    }
  });
}

if (!TEST_DATABASE_URL) it.skip(skipReason("Postgres", "TEST_DATABASE_URL"), () => {});
if (!TEST_REDIS_URL) it.skip(skipReason("Redis", "TEST_REDIS_URL"), () => {});
