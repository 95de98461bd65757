/**
 * Layer 3 of the SQL console through the app, with limits small enough to reach: a query that reads
 * more bytes than CONSOLE_MAX_BYTES_TO_READ (20 kB here) stops with 400 and the engine's message.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { insertMarkers } from "./console-fixtures.js";

let app: TestApp;
let a: Awaited<ReturnType<TestApp["pixelWithKey"]>>;

beforeAll(async () => {
  app = await startTestApp({ env: { CONSOLE_MAX_BYTES_TO_READ: "20000", RATE_QUERY_PER_SEC: "100000" } });
  a = await app.pixelWithKey(["analytics:read"]);
  await insertMarkers(app.stores.warehouse, a.pixelId, "A", 3000);
});
afterAll(() => app?.close());

const sql = (text: string) =>
  app.call("POST", "/db-mgmt/api/sql", {
    key: a.key,
    pixelId: a.pixelId,
    body: { pixelId: a.pixelId, sql: text },
  });

describe("CONSOLE_MAX_BYTES_TO_READ", () => {
  it("answers a query that reads little", async () => {
    const res = await sql("SELECT order_id FROM orders");
    expect(res.status, res.text).toBe(200);
    expect((res.body as { bytesRead: number }).bytesRead).toBeLessThan(20_000);
  });

  it("stops a query that reads more with 400 and the engine's message", async () => {
    // Every column of the events the sort reads: far more than 20 kB.
    const res = await sql("SELECT * FROM events ORDER BY properties, event_id");
    expect(res.status, res.text.slice(-200)).toBe(400);
    expect((res.body as { message: string }).message).toMatch(/max_bytes_to_read|TOO_MANY_BYTES/);
  });
});
