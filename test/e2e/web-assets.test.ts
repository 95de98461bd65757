/**
 * The web pages' HTTP side (issue 7), without a browser: /console and /dashboards are HTML shells with
 * a strict Content-Security-Policy and no secret, needing no key; their bundled assets are served with
 * the right content types, content-hashed names, ETags (304 on a match) and gzip; an unknown asset path
 * is a JSON 404; nothing points outside the service.
 */
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONTENT_SECURITY_POLICY } from "../../src/web/routes.js";
import { startTestApp, type TestApp } from "../helpers/app.js";

let app: TestApp;
beforeAll(async () => {
  app = await startTestApp();
});
afterAll(() => app?.close());

const get = (path: string, headers: Record<string, string> = {}) => fetch(app.url + path, { headers });

/** The /assets/ paths a page's HTML names. */
async function assetsOf(page: string): Promise<string[]> {
  const html = await (await get(page)).text();
  return [...html.matchAll(/(?:href|src)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
}

describe("the pages", () => {
  it.each(["/console", "/dashboards"])("%s is an HTML shell with the CSP, without a key", async (path) => {
    const res = await get(path);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(res.headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("cache-control")).toBe("no-cache");
    expect(res.headers.get("etag")).toMatch(/^"[\w-]+"$/);
    const html = await res.text();
    expect(html).toMatch(/^<!doctype html>/);
    // No inline script or style (the CSP would refuse them), no secret, nothing from elsewhere.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|style=/);
    expect(html).not.toMatch(/pxh_|https?:\/\//);
    const assets = await assetsOf(path);
    expect(assets.some((a) => /\/assets\/[a-z]+-[A-Z0-9]+\.js$/.test(a))).toBe(true);
    expect(assets.some((a) => /\/assets\/[a-z]+-[A-Z0-9]+\.css$/.test(a))).toBe(true);
  });

  it("the policy allows only this origin and nothing inline", () => {
    const directives = Object.fromEntries(
      CONTENT_SECURITY_POLICY.split("; ").map((d) => [d.split(" ")[0], d.split(" ").slice(1).join(" ")]),
    );
    expect(directives).toEqual({
      "default-src": "'self'",
      "script-src": "'self'",
      "style-src": "'self'",
      "img-src": "'self' data: blob:",
      "font-src": "'self'",
      "connect-src": "'self'",
      "object-src": "'none'",
      "base-uri": "'none'",
      "form-action": "'self'",
      "frame-ancestors": "'none'",
    });
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/unsafe|\*|https?:/);
  });

  it("HEAD answers the headers alone; a matching If-None-Match is 304", async () => {
    const head = await fetch(`${app.url}/console`, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(await head.text()).toBe("");
    const etag = head.headers.get("etag")!;
    const again = await get("/console", { "if-none-match": etag });
    expect(again.status).toBe(304);
    expect(again.headers.get("content-security-policy")).toBe(CONTENT_SECURITY_POLICY);
  });
});

describe("the assets", () => {
  it("are served with their content types, long-lived caching, ETags and gzip", async () => {
    const paths = [...new Set([...(await assetsOf("/console")), ...(await assetsOf("/dashboards"))])];
    const types: Record<string, string> = {
      js: "text/javascript; charset=utf-8",
      css: "text/css; charset=utf-8",
      svg: "image/svg+xml",
    };
    expect(paths.map((p) => p.split(".").pop()).sort()).toEqual(["css", "css", "js", "js", "svg"]);
    for (const path of paths) {
      const ext = path.split(".").pop()!;
      const res = await get(path, { "accept-encoding": "identity" });
      expect(res.status, path).toBe(200);
      expect(res.headers.get("content-type"), path).toBe(types[ext]);
      expect(res.headers.get("cache-control"), path).toBe("public, max-age=31536000, immutable");
      expect(res.headers.get("x-content-type-options"), path).toBe("nosniff");
      expect(res.headers.get("content-encoding"), path).toBeNull();
      const body = Buffer.from(await res.arrayBuffer());
      expect(body.length, path).toBeGreaterThan(100);
      const etag = res.headers.get("etag")!;
      expect(etag, path).toMatch(/^"[\w-]+"$/);
      expect((await get(path, { "if-none-match": etag, "accept-encoding": "identity" })).status, path).toBe(
        304,
      );

      // gzip when asked for (undici's fetch would undo it: read the raw bytes with node:http instead).
      const raw = await rawGet(path, { "accept-encoding": "gzip" });
      expect(raw.headers["content-encoding"], path).toBe("gzip");
      expect(raw.headers.vary, path).toBe("Accept-Encoding");
      expect(raw.headers.etag, path).not.toBe(etag);
      expect(gunzipSync(raw.body).equals(body), path).toBe(true);
    }
  });

  it("the bundles are self-contained: CodeMirror and uPlot inside, no remote URL to load", async () => {
    const [js] = (await assetsOf("/console")).filter((p) => p.endsWith(".js"));
    const code = await (await get(js!)).text();
    expect(code).toContain("cm-editor"); // CodeMirror
    expect(code).toContain("uplot"); // uPlot
    expect(code).not.toMatch(/\bimport\s*\(?\s*["']https?:|from\s*["']https?:/);
    expect(code).not.toMatch(/unpkg\.com|jsdelivr|cdnjs|googleapis/);
    const [css] = (await assetsOf("/console")).filter((p) => p.endsWith(".css"));
    const style = await (await get(css!)).text();
    expect(style).toContain(".uplot");
    expect(style).not.toMatch(/@import|url\(\s*["']?https?:/);
  });

  it.each([
    "/assets/nope.js",
    "/assets/console.js",
    "/assets/../package.json",
    "/assets/%2e%2e%2fpackage.json",
    "/assets/",
    "/assets/a/b.js",
  ])("an unknown asset path %s is a JSON 404", async (path) => {
    const res = await get(path);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ message: "Not Found" });
  });
});

function rawGet(
  path: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return import("node:http").then(
    ({ request }) =>
      new Promise((resolve, reject) => {
        const req = request(app.url + path, { headers }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () =>
            resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
          );
          res.on("error", reject);
        });
        req.on("error", reject);
        req.end();
      }),
  );
}
