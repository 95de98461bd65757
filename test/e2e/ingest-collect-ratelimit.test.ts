/**
 * The browser collector's rate limit (per pixel + browser IP), with RATE_COLLECT_PER_SEC=1 so the
 * bucket holds 2 requests: a burst from one IP meets 429 with Retry-After and RateLimit headers.
 * Its own file because the rate is app-wide configuration (one app per file).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";
import { expectEnvelope } from "./ingest-helpers.js";

const ORIGIN = "https://shop.example";
let app: TestApp;
beforeAll(async () => {
  app = await startTestApp({ env: { RATE_COLLECT_PER_SEC: "1" } });
});
afterAll(() => app?.close());

async function allowedPixel(): Promise<string> {
  const { pixelId } = await app.pixelWithKey(["events:write"]);
  await app.services.pixels.updateOrigins(pixelId, [ORIGIN], []);
  return pixelId;
}

const collect = (pixelId: string) =>
  app.call("POST", "/tr/api/collect", {
    rawBody: JSON.stringify({ pixelId, events: [{ name: "page_view" }] }),
    headers: { "content-type": "text/plain", origin: ORIGIN },
  });

describe("POST /tr/api/collect rate limit", () => {
  it("a burst from one IP gets 429 with Retry-After and RateLimit headers", async () => {
    const pixelId = await allowedPixel();
    const responses = [];
    for (let i = 0; i < 10; i++) responses.push(await collect(pixelId));
    const limited = responses.filter((r) => r.status === 429);
    expect(limited.length).toBeGreaterThan(0);
    for (const r of responses) expect([200, 429]).toContain(r.status);
    // The first request of a fresh bucket always passes, and carries the headers too.
    expect(responses[0]!.status).toBe(200);
    expect(responses[0]!.headers.get("ratelimit")).toBeTruthy();
    expect(responses[0]!.headers.get("ratelimit-policy")).toBeTruthy();
    const first = limited[0]!;
    expect(Number(first.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(first.headers.get("ratelimit")).toBeTruthy();
    expect(first.headers.get("ratelimit-policy")).toMatch(/q=2/);
    expectEnvelope(first, 429, "RATE_LIMITED");
    // Only the accepted requests were stored.
    const rows = await app.stores.warehouse.query<{ n: number }>(
      "SELECT count() AS n FROM events WHERE pixel_id = {pixel:String}",
      { pixel: pixelId },
    );
    expect(rows[0]!.n).toBe(responses.filter((r) => r.status === 200).length);
  });

  it("the bucket is per pixel: another pixel from the same IP is not limited", async () => {
    const a = await allowedPixel();
    for (let i = 0; i < 6; i++) await collect(a);
    const b = await allowedPixel();
    expect((await collect(b)).status).toBe(200);
  });
});
