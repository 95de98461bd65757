/** Without METRICS_TOKEN the service's port does not serve /metrics at all (docs/operations.md). */
import { afterAll, beforeAll, expect, it } from "vitest";
import { startTestApp, type TestApp } from "../helpers/app.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

it("answers 404 naming how to turn metrics on", async () => {
  const res = await app.call("GET", "/metrics", {
    headers: { authorization: "Bearer anything-anything-anything" },
  });
  expect(res.status).toBe(404);
  expect(res.text).toMatch(/METRICS_TOKEN|METRICS_PORT/);
});
