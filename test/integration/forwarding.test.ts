import { createHash, randomBytes } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { NotFoundError, ValidationError } from "../../src/errors.js";
import { DestinationService } from "../../src/forwarding/destinations.js";
import {
  DELIVERY_ID_HEADER,
  EVENT_ID_HEADER,
  type MetaPayload,
  SIGNATURE_HEADER,
  verifyWebhookSignature,
  type WebhookBody,
} from "../../src/forwarding/mappers.js";
import { Forwarder, type ForwarderOptions } from "../../src/forwarding/service.js";
import type { EventRow, ForwardableEvent } from "../../src/shared/event-row.js";
import { migrate } from "../../src/stores/migrations.js";
import type { SqlExecutor, SqlStore, SqlValue } from "../../src/stores/sql/port.js";
import type { WarehouseStore } from "../../src/stores/warehouse/port.js";
import { skipReason } from "../helpers/env.js";
import { type Opened, openChdb, sqlAdapters } from "../helpers/stores.js";

// ---------------------------------------------------------------------------------------------
// A local receiver that answers by plan

interface Received {
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  status: number | "hang";
}

type Reply = { status: number; headers?: Record<string, string>; body?: string } | "hang";

interface Receiver {
  url: string;
  requests: Received[];
  /** Resolves when the next request arrives. */
  next(): Promise<Received>;
  close(): Promise<void>;
}

async function startReceiver(plan: (n: number, path: string) => Reply): Promise<Receiver> {
  const requests: Received[] = [];
  const hanging: ServerResponse[] = [];
  let waiters: ((r: Received) => void)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const url = new URL(req.url ?? "/", "http://receiver");
      const reply = plan(requests.length + 1, url.pathname);
      const received: Received = {
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        status: reply === "hang" ? "hang" : reply.status,
      };
      requests.push(received);
      const w = waiters;
      waiters = [];
      for (const resolve of w) resolve(received);
      if (reply === "hang") {
        hanging.push(res);
        return;
      }
      res.writeHead(reply.status, { "content-type": "text/plain", ...reply.headers });
      res.end(reply.body ?? (reply.status < 300 ? "ok" : "nope"));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    next: () => new Promise((resolve) => waiters.push(resolve)),
    close: () =>
      new Promise<void>((resolve) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// Events and fixtures

const sha = (s: string) => createHash("sha256").update(s).digest("hex");
const uid = (prefix: string) => `${prefix}_${randomBytes(6).toString("hex")}`;

function event(pixelId: string, name: string, overrides: Partial<EventRow> = {}): ForwardableEvent {
  const row: EventRow = {
    pixel_id: pixelId,
    event_id: uid("evt"),
    client_event_id: true,
    name,
    event_time: "2026-03-29 10:11:12.345",
    received_at: "2026-03-29 10:11:12.400",
    origin: "browser",
    request_id: uid("req"),
    identity_id: "idn_1",
    canonical_id: "idn_1",
    email_hashes: [sha("buyer@example.com")],
    user_ids: ["customer-7"],
    store_ids: [],
    ip: "198.51.100.0",
    user_agent: "Mozilla/5.0 (Test)",
    ua_browser: "",
    ua_browser_version: "",
    ua_os: "",
    ua_device: "",
    locale: "de-DE",
    page_url: "https://shop.example/p/1",
    page_host: "shop.example",
    page_path: "/p/1",
    referrer: "",
    referrer_host: "",
    utm_source: "",
    utm_medium: "",
    utm_campaign: "",
    utm_term: "",
    utm_content: "",
    utm_id: "",
    click_ids: { fbclid: "fb-1" },
    fbc: "fb.1.1711700000000.fb-1",
    fbp: "fb.1.1711700000000.999",
    channel: "paid_social",
    source: "facebook",
    campaign_id: "",
    adset_id: "",
    ad_id: "",
    is_touch: false,
    order_id: name === "purchase" ? "order-1" : "",
    value: name === "purchase" ? "42.50" : null,
    currency: name === "purchase" ? "EUR" : "",
    items: name === "purchase" ? [{ id: "sku-1", name: "Shoe", price: "21.25", quantity: 2 }] : [],
    viewport_width: null,
    viewport_height: null,
    page_height: null,
    device_pixel_ratio: null,
    properties: "{}",
    ...overrides,
  };
  return { row, originalIp: "198.51.100.23" };
}

/** Records every statement text sent through a real store (the store itself is not replaced). */
function recording(store: SqlStore): { store: SqlStore; statements: string[] } {
  const statements: string[] = [];
  const wrapTx = (tx: SqlExecutor): SqlExecutor => ({
    query<T>(text: string, params?: readonly SqlValue[]) {
      statements.push(text);
      return tx.query<T>(text, params);
    },
    exec: (script) => tx.exec(script),
  });
  return {
    statements,
    store: {
      kind: store.kind,
      query<T>(text: string, params?: readonly SqlValue[]) {
        statements.push(text);
        return store.query<T>(text, params);
      },
      exec: (script) => store.exec(script),
      transaction: (fn) => store.transaction((tx) => fn(wrapTx(tx))),
      exclusive: (key, fn) => store.exclusive(key, fn),
      ping: () => store.ping(),
      close: () => store.close(),
    },
  };
}

let wh: Opened<WarehouseStore>;
beforeAll(async () => {
  wh = await openChdb();
});
afterAll(async () => {
  await wh?.close();
});

for (const adapter of sqlAdapters) {
  describe.skipIf(!adapter.available)(`forwarding: ${adapter.name}`, () => {
    let opened: Opened<SqlStore>;
    let sql: SqlStore;
    const receivers: Receiver[] = [];
    const workers: Forwarder[] = [];

    beforeAll(async () => {
      opened = await adapter.open();
      sql = opened.store;
      await migrate(sql, wh.store);
    });
    afterAll(async () => {
      await opened?.close();
    });
    afterEach(async () => {
      for (const w of workers.splice(0)) await w.stop();
      for (const r of receivers.splice(0)) await r.close();
      await sql.query("DELETE FROM deliveries");
      await sql.query("DELETE FROM dead_letters");
    });

    async function pixel(): Promise<string> {
      const id = uid("px");
      await sql.query("INSERT INTO accounts (id, name) VALUES ($1, $2)", [`acc_${id}`, "Forwarding test"]);
      await sql.query("INSERT INTO pixels (id, account_id, name) VALUES ($1, $2, $3)", [
        id,
        `acc_${id}`,
        "Forwarding test",
      ]);
      return id;
    }

    async function receiver(plan: (n: number, path: string) => Reply): Promise<Receiver> {
      const r = await startReceiver(plan);
      receivers.push(r);
      return r;
    }

    function forwarder(options: ForwarderOptions = {}, store: SqlStore = sql) {
      const destinations = new DestinationService(store);
      const errors: unknown[] = [];
      const fw = new Forwarder(store, destinations, {
        backoffBaseMs: 0,
        requestTimeoutMs: 5_000,
        onError: (err) => errors.push(err),
        ...options,
      });
      workers.push(fw);
      return { fw, destinations, errors };
    }

    async function queued(pixelId: string): Promise<number> {
      const { rows } = await sql.query<{ n: string }>(
        "SELECT count(*) AS n FROM deliveries WHERE pixel_id = $1",
        [pixelId],
      );
      return Number(rows[0]!.n);
    }

    /** runOnce until the pixel's queue is empty (no waiting: backoff base is 0 in these tests). */
    async function drain(fw: Forwarder, pixelId: string, maxRounds = 50): Promise<number> {
      for (let round = 1; round <= maxRounds; round++) {
        await fw.runOnce();
        if ((await queued(pixelId)) === 0) return round;
      }
      throw new Error(`queue of ${pixelId} not empty after ${maxRounds} rounds`);
    }

    it("delivers every matching event at least once through 500 and 429, signed and mapped", async () => {
      const px = await pixel();
      const rx = await receiver((n) =>
        n === 1
          ? { status: 500 }
          : n === 2
            ? { status: 429, headers: { "Retry-After": "0" } }
            : { status: 200 },
      );
      const { fw, destinations, errors } = forwarder();
      const hook = await destinations.add({
        pixelId: px,
        kind: "webhook",
        name: "shop backend",
        config: { url: `${rx.url}/hook` },
        eventNames: ["purchase", "add_to_cart"],
      });
      if (hook.kind !== "webhook") throw new Error("expected a webhook");
      await destinations.add({
        pixelId: px,
        kind: "meta_capi",
        config: {
          pixelId: "1234567890",
          accessToken: "meta-token-abcdef",
          baseUrl: rx.url,
          testEventCode: "TEST42",
        },
        eventNames: ["purchase", "page_view"],
      });

      const purchase = event(px, "purchase");
      const cart = event(px, "add_to_cart");
      const view = event(px, "page_view", { origin: "server" });
      const filtered = event(px, "view_content");
      expect(await fw.enqueue(px, [purchase, cart, view, filtered])).toBe(4);

      const { rows } = await sql.query<{ id: string; payload: { id?: string } }>(
        "SELECT id, payload FROM deliveries WHERE destination_id = $1 ORDER BY id",
        [hook.id],
      );
      expect(rows).toHaveLength(2);
      for (const r of rows) expect(r.payload.id).toBe(r.id);

      await drain(fw, px);
      expect(errors).toEqual([]);
      expect(rx.requests.map((r) => r.status).slice(0, 2)).toEqual([500, 429]);
      expect(rx.requests.length).toBeGreaterThanOrEqual(6);

      const hooks = rx.requests.filter((r) => r.path === "/hook");
      const metas = rx.requests.filter((r) => r.path === "/v21.0/1234567890/events");
      expect(hooks.length + metas.length).toBe(rx.requests.length);

      // Webhooks: every request validly signed; the purchase and the cart arrived with a 200.
      for (const r of hooks) {
        expect(verifyWebhookSignature(hook.config.secret, r.headers[SIGNATURE_HEADER], r.body, 300)).toBe(
          true,
        );
        expect(verifyWebhookSignature("another-secret-value", r.headers[SIGNATURE_HEADER], r.body, 300)).toBe(
          false,
        );
        const body = JSON.parse(r.body) as WebhookBody;
        expect(r.headers[EVENT_ID_HEADER]).toBe(body.event.eventId);
        expect(r.headers[DELIVERY_ID_HEADER]).toBe(body.id);
        expect(r.headers["content-type"]).toBe("application/json");
        expect(body.pixelId).toBe(px);
      }
      const hookOk = hooks.filter((r) => r.status === 200).map((r) => JSON.parse(r.body) as WebhookBody);
      expect(new Set(hookOk.map((b) => b.event.eventId))).toEqual(
        new Set([purchase.row.event_id, cart.row.event_id]),
      );
      const hookPurchase = hookOk.find((b) => b.event.eventId === purchase.row.event_id)!;
      expect(hookPurchase.event).toMatchObject({
        name: "purchase",
        eventTime: "2026-03-29T10:11:12.345Z",
        ip: "198.51.100.23",
        value: 42.5,
        currency: "EUR",
        orderId: "order-1",
        page: { url: "https://shop.example/p/1", host: "shop.example", path: "/p/1" },
        properties: {},
      });

      // Meta: the purchase and the page view arrived with the mapped fields.
      for (const r of metas) {
        expect(r.query.get("access_token")).toBe("meta-token-abcdef");
        expect(r.headers).not.toHaveProperty(SIGNATURE_HEADER);
      }
      const metaOk = metas.filter((r) => r.status === 200).map((r) => JSON.parse(r.body) as MetaPayload);
      expect(new Set(metaOk.map((b) => b.data[0]!.event_id))).toEqual(
        new Set([purchase.row.event_id, view.row.event_id]),
      );
      const metaPurchase = metaOk.find((b) => b.data[0]!.event_id === purchase.row.event_id)!;
      expect(metaPurchase).toEqual({
        test_event_code: "TEST42",
        data: [
          {
            event_name: "Purchase",
            event_time: Math.floor(Date.parse("2026-03-29T10:11:12.345Z") / 1000),
            event_id: purchase.row.event_id,
            action_source: "website",
            event_source_url: "https://shop.example/p/1",
            user_data: {
              em: [sha("buyer@example.com")],
              external_id: [sha("customer-7")],
              client_ip_address: "198.51.100.23",
              client_user_agent: "Mozilla/5.0 (Test)",
              fbc: "fb.1.1711700000000.fb-1",
              fbp: "fb.1.1711700000000.999",
            },
            custom_data: {
              value: 42.5,
              currency: "EUR",
              contents: [{ id: "sku-1", quantity: 2, item_price: 21.25 }],
              order_id: "order-1",
            },
          },
        ],
      });
      const metaView = metaOk.find((b) => b.data[0]!.event_id === view.row.event_id)!;
      expect(metaView.data[0]).toMatchObject({ event_name: "PageView", action_source: "website" });
      expect(metaView.data[0]).not.toHaveProperty("custom_data");

      // Filtered-out events never arrived anywhere.
      const all = rx.requests.map((r) => r.body).join("\n");
      expect(all).not.toContain(filtered.row.event_id);
      expect(hooks.map((r) => r.body).join("\n")).not.toContain(view.row.event_id);
      expect(metas.map((r) => r.body).join("\n")).not.toContain(cart.row.event_id);

      const dead = await sql.query("SELECT 1 FROM dead_letters WHERE pixel_id = $1", [px]);
      expect(dead.rows).toHaveLength(0);
    });

    it("dead-letters after maxAttempts; replay delivers once the receiver recovers", async () => {
      const px = await pixel();
      let healthy = false;
      const rx = await receiver(() => (healthy ? { status: 204 } : { status: 400, body: "bad request" }));
      const { fw, destinations } = forwarder({ maxAttempts: 3 });
      const hook = await destinations.add({ pixelId: px, kind: "webhook", config: { url: rx.url } });
      if (hook.kind !== "webhook") throw new Error("expected a webhook");
      const a = event(px, "purchase");
      const b = event(px, "add_to_cart");
      expect(await fw.enqueue(px, [a, b])).toBe(2);

      expect(await drain(fw, px)).toBe(3);
      expect(rx.requests).toHaveLength(6);
      const letters = await fw.listDeadLetters(px);
      expect(letters).toHaveLength(2);
      for (const l of letters) {
        expect(l).toMatchObject({ destinationId: hook.id, pixelId: px, attempts: 3, replayedAt: null });
        expect(l.lastError).toBe("HTTP 400: bad request");
      }
      expect(new Set(letters.map((l) => l.eventId))).toEqual(new Set([a.row.event_id, b.row.event_id]));
      expect(new Set(letters.map((l) => l.eventName))).toEqual(new Set(["purchase", "add_to_cart"]));
      const originalIds = new Set(rx.requests.map((r) => (JSON.parse(r.body) as WebhookBody).id));
      expect(originalIds.size).toBe(2);

      healthy = true;
      const first = letters.find((l) => l.eventId === a.row.event_id)!;
      expect(await fw.replayDeadLetters({ pixelId: px, ids: [first.id] })).toBe(1);
      expect(await fw.replayDeadLetters({ pixelId: px })).toBe(1);
      expect(await fw.replayDeadLetters({ pixelId: px })).toBe(0);
      const { rows } = await sql.query<{ attempts: number }>(
        "SELECT attempts FROM deliveries WHERE pixel_id = $1",
        [px],
      );
      expect(rows.map((r) => r.attempts)).toEqual([0, 0]);
      expect(await fw.listDeadLetters(px)).toEqual([]);
      const replayed = await fw.listDeadLetters(px, { includeReplayed: true });
      expect(replayed).toHaveLength(2);
      for (const l of replayed) expect(l.replayedAt).toBeInstanceOf(Date);

      await drain(fw, px);
      const ok = rx.requests.filter((r) => r.status === 204);
      expect(ok).toHaveLength(2);
      for (const r of ok) {
        expect(verifyWebhookSignature(hook.config.secret, r.headers[SIGNATURE_HEADER], r.body, 300)).toBe(
          true,
        );
      }
      const okBodies = ok.map((r) => JSON.parse(r.body) as WebhookBody);
      expect(new Set(okBodies.map((x) => x.event.eventId))).toEqual(
        new Set([a.row.event_id, b.row.event_id]),
      );
      // The body id is the first delivery's id: stable through dead-lettering and replay.
      expect(new Set(okBodies.map((x) => x.id))).toEqual(originalIds);
    });

    it("a destination that never answers blocks neither other destinations nor enqueue", async () => {
      const px = await pixel();
      const hang = await receiver(() => "hang");
      const ok = await receiver(() => ({ status: 200 }));
      const { fw, destinations } = forwarder({ requestTimeoutMs: 1_500 });
      const slow = await destinations.add({ pixelId: px, kind: "webhook", config: { url: hang.url } });
      await destinations.add({ pixelId: px, kind: "webhook", config: { url: ok.url } });
      const e1 = event(px, "purchase");
      expect(await fw.enqueue(px, [e1])).toBe(2);

      const arrived = hang.next();
      let settled = false;
      const run = fw.runOnce().finally(() => {
        settled = true;
      });
      await arrived;
      // While the request hangs, ingestion can still queue (nothing waits on destinations).
      expect(await fw.enqueue(px, [event(px, "page_view")])).toBe(2);
      expect(settled).toBe(false);

      const result = await run;
      expect(result).toMatchObject({ claimed: 2, delivered: 1, retried: 1, deadLettered: 0 });
      expect(ok.requests.map((r) => (JSON.parse(r.body) as WebhookBody).event.eventId)).toEqual([
        e1.row.event_id,
      ]);
      const { rows } = await sql.query<{ attempts: number; last_error: string; locked_until: Date | null }>(
        "SELECT attempts, last_error, locked_until FROM deliveries WHERE destination_id = $1 AND event_id = $2",
        [slow.id, e1.row.event_id],
      );
      expect(rows).toEqual([{ attempts: 1, last_error: "timeout after 1500 ms", locked_until: null }]);
    });

    it("enqueue issues no INSERT for a pixel without destinations or matching events", async () => {
      const px = await pixel();
      const rec = recording(sql);
      const { fw, destinations } = forwarder({}, rec.store);
      expect(await fw.enqueue(px, [event(px, "purchase"), event(px, "page_view")])).toBe(0);
      expect(rec.statements.some((s) => /\bINSERT\b/i.test(s))).toBe(false);
      const lookups = rec.statements.length;
      expect(lookups).toBe(1);
      // Cached: the next batch costs no SQL at all.
      expect(await fw.enqueue(px, [event(px, "purchase")])).toBe(0);
      expect(rec.statements).toHaveLength(lookups);

      await destinations.add({
        pixelId: px,
        kind: "webhook",
        config: { url: "http://127.0.0.1:9/unused" },
        eventNames: ["purchase"],
      });
      rec.statements.length = 0;
      expect(await fw.enqueue(px, [event(px, "page_view")])).toBe(0);
      expect(rec.statements.some((s) => /\bINSERT\b/i.test(s))).toBe(false);
      expect(await fw.enqueue(px, [event(px, "purchase"), event(px, "page_view")])).toBe(1);
      expect(rec.statements.filter((s) => /\bINSERT\b/i.test(s))).toHaveLength(1);
    });

    it("several workers share the queue without sending a row twice", async () => {
      const px = await pixel();
      const rx = await receiver(() => ({ status: 200 }));
      const a = forwarder({ batchSize: 4 });
      const b = forwarder({ batchSize: 4 });
      await a.destinations.add({ pixelId: px, kind: "webhook", config: { url: rx.url } });
      const events = Array.from({ length: 10 }, () => event(px, "purchase"));
      expect(await a.fw.enqueue(px, events)).toBe(10);
      for (let i = 0; i < 10 && (await queued(px)) > 0; i++) {
        const [ra, rb] = await Promise.all([a.fw.runOnce(), b.fw.runOnce()]);
        expect(ra.claimed + rb.claimed).toBeLessThanOrEqual(8);
      }
      expect(await queued(px)).toBe(0);
      const ids = rx.requests.map((r) => (JSON.parse(r.body) as WebhookBody).event.eventId);
      expect(ids).toHaveLength(10);
      expect(new Set(ids)).toEqual(new Set(events.map((e) => e.row.event_id)));
    });

    it("the started worker delivers in the background and stops cleanly", async () => {
      const px = await pixel();
      const rx = await receiver((n) =>
        n === 1 ? { status: 503, headers: { "Retry-After": "0" } } : { status: 200 },
      );
      const { fw, destinations, errors } = forwarder({ pollIntervalMs: 20 });
      await destinations.add({ pixelId: px, kind: "webhook", config: { url: rx.url } });
      fw.start();
      fw.start();
      const e = event(px, "purchase");
      expect(await fw.enqueue(px, [e])).toBe(1);
      await vi.waitFor(
        async () => {
          expect(await queued(px)).toBe(0);
        },
        { timeout: 20_000, interval: 20 },
      );
      await fw.stop();
      expect(fw.running).toBe(false);
      expect(errors).toEqual([]);
      expect(rx.requests.map((r) => r.status)).toEqual([503, 200]);
    });

    it("stop() aborts in-flight requests and hands their rows back without counting the attempt", async () => {
      const px = await pixel();
      const hang = await receiver(() => "hang");
      const { fw, destinations, errors } = forwarder({ requestTimeoutMs: 600_000 });
      await destinations.add({ pixelId: px, kind: "webhook", config: { url: hang.url } });
      expect(await fw.enqueue(px, [event(px, "purchase")])).toBe(1);
      const arrived = hang.next();
      fw.start();
      await arrived;
      await fw.stop();
      expect(errors).toEqual([]);
      const { rows } = await sql.query<{
        attempts: number;
        locked_until: Date | null;
        last_error: string | null;
      }>("SELECT attempts, locked_until, last_error FROM deliveries WHERE pixel_id = $1", [px]);
      expect(rows).toEqual([{ attempts: 0, locked_until: null, last_error: null }]);
    });

    it("reports store failures through onError and keeps polling", async () => {
      const px = await pixel();
      let broken = true;
      const failing: SqlStore = {
        kind: sql.kind,
        query<T>(text: string, params?: readonly SqlValue[]) {
          if (broken) return Promise.reject(new Error("store is down"));
          return sql.query<T>(text, params);
        },
        exec: (s) => sql.exec(s),
        transaction: (fn) => sql.transaction(fn),
        exclusive: (key, fn) => sql.exclusive(key, fn),
        ping: () => sql.ping(),
        close: async () => {},
      };
      const rx = await receiver(() => ({ status: 200 }));
      const setup = forwarder();
      await setup.destinations.add({ pixelId: px, kind: "webhook", config: { url: rx.url } });
      expect(await setup.fw.enqueue(px, [event(px, "lead")])).toBe(1);
      const { fw, errors } = forwarder({ pollIntervalMs: 10 }, failing);
      fw.start();
      await vi.waitFor(() => expect(errors.length).toBeGreaterThan(0), { timeout: 10_000, interval: 10 });
      expect((errors[0] as Error).message).toBe("store is down");
      broken = false;
      await vi.waitFor(() => expect(rx.requests).toHaveLength(1), { timeout: 20_000, interval: 10 });
      await fw.stop();
    });

    describe("destinations", () => {
      it("adds webhooks with a generated secret and validates configs", async () => {
        const px = await pixel();
        const service = new DestinationService(sql);
        const d = await service.add({
          pixelId: px,
          kind: "webhook",
          config: { url: "https://example.com/in" },
        });
        expect(d.kind === "webhook" && Buffer.from(d.config.secret, "base64url").length).toBe(32);
        expect(d.id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
        expect(d.eventNames).toBeNull();
        await expect(
          service.add({ pixelId: px, kind: "webhook", config: { url: "ftp://example.com/in" } }),
        ).rejects.toBeInstanceOf(ValidationError);
        await expect(
          service.add({
            pixelId: px,
            kind: "webhook",
            config: { url: "https://x.example", secret: "short" },
          }),
        ).rejects.toBeInstanceOf(ValidationError);
        await expect(
          service.add({ pixelId: px, kind: "meta_capi", config: { pixelId: "abc", accessToken: "t" } }),
        ).rejects.toBeInstanceOf(ValidationError);
        await expect(
          service.add({ pixelId: "px_missing", kind: "webhook", config: { url: "https://example.com" } }),
        ).rejects.toBeInstanceOf(NotFoundError);

        const meta = await service.add({
          pixelId: px,
          kind: "meta_capi",
          config: { pixelId: "987", accessToken: "tok" },
          eventNames: ["purchase", "purchase", "lead"],
        });
        expect(meta.config).toEqual({
          pixelId: "987",
          accessToken: "tok",
          baseUrl: "https://graph.facebook.com",
          apiVersion: "v21.0",
        });
        expect(meta.eventNames).toEqual(["purchase", "lead"]);
        expect((await service.list(px)).map((x) => x.id)).toEqual([d.id, meta.id]);
      });

      it("forPixel is cached, skips disabled ones and sees changes made through the service", async () => {
        const px = await pixel();
        const service = new DestinationService(sql);
        expect(await service.forPixel(px)).toEqual([]);
        const d = await service.add({ pixelId: px, kind: "webhook", config: { url: "https://example.com" } });
        expect((await service.forPixel(px)).map((x) => x.id)).toEqual([d.id]);
        await service.add({
          pixelId: px,
          kind: "webhook",
          config: { url: "https://example.com/off" },
          enabled: false,
        });
        expect((await service.forPixel(px)).map((x) => x.id)).toEqual([d.id]);

        const { fw } = forwarder();
        expect(await fw.enqueue(px, [event(px, "purchase")])).toBe(1);
        await service.remove(d.id);
        expect(await service.forPixel(px)).toEqual([]);
        expect(await queued(px)).toBe(0); // cascaded
        await expect(service.remove(d.id)).rejects.toBeInstanceOf(NotFoundError);
      });

      it("enqueue skips a destination removed by another process while cached", async () => {
        const px = await pixel();
        const { fw, destinations } = forwarder();
        const other = new DestinationService(sql);
        const d = await destinations.add({
          pixelId: px,
          kind: "webhook",
          config: { url: "https://example.com" },
        });
        expect(await fw.enqueue(px, [event(px, "purchase")])).toBe(1);
        await other.remove(d.id); // `destinations` still has it cached
        expect(await fw.enqueue(px, [event(px, "purchase")])).toBe(0);
      });
    });
  });
}

if (!sqlAdapters.find((a) => a.name === "postgres")?.available) {
  it.skip(skipReason("Postgres", "TEST_DATABASE_URL"), () => {});
}
