import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

/** The pages the service serves, each built from web/<name>/main.ts (which imports its CSS). */
export const PAGES = {
  console: { title: "SQL console" },
  dashboards: { title: "Dashboards" },
} as const;
export type PageName = keyof typeof PAGES;

export interface Asset {
  body: Buffer;
  contentType: string;
  /** A strong ETag from the content's SHA-256. */
  etag: string;
  /** The body gzipped, when that is smaller (text types), with its own ETag. */
  gzip?: { body: Buffer; etag: string };
}

export interface WebBundle {
  /** Keyed by file name as served under /assets/ (content-hashed names, e.g. `console-3FQX2K7A.js`). */
  assets: Map<string, Asset>;
  pages: Map<PageName, Asset>;
}

/** The browser sources: web/ at the repository root (beside src/). */
export const WEB_DIR = fileURLToPath(new URL("../../web/", import.meta.url));

const TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".svg": "image/svg+xml",
  ".html": "text/html; charset=utf-8",
};

const contentTypeOf = (name: string) =>
  TYPES[name.slice(name.lastIndexOf("."))] ?? "application/octet-stream";

function asset(name: string, body: Buffer | string): Asset {
  const bytes = typeof body === "string" ? Buffer.from(body) : body;
  const hash = createHash("sha256").update(bytes).digest("base64url").slice(0, 27);
  const contentType = contentTypeOf(name);
  const gz = /^(text\/|application\/json|image\/svg)/.test(contentType)
    ? gzipSync(bytes, { level: 9 })
    : undefined;
  return {
    body: bytes,
    contentType,
    etag: `"${hash}"`,
    ...(gz && gz.length < bytes.length ? { gzip: { body: gz, etag: `"${hash}-gz"` } } : {}),
  };
}

const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#4338ca"/><rect x="7" y="17" width="4" height="8" rx="1" fill="#fff"/><rect x="14" y="11" width="4" height="14" rx="1" fill="#fff"/><rect x="21" y="7" width="4" height="18" rx="1" fill="#c7d2fe"/></svg>`;

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function pageHtml(name: PageName, js: string, css: string | undefined, favicon: string): string {
  return `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="referrer" content="no-referrer">
  <title>${escapeHtml(PAGES[name].title)} · pixelhouse</title>
  <link rel="icon" href="/assets/${favicon}" type="image/svg+xml">
${css ? `  <link rel="stylesheet" href="/assets/${css}">\n` : ""}  <script type="module" src="/assets/${js}"></script>
</head>
<body data-page="${name}">
  <noscript>This page needs JavaScript.</noscript>
</body>
</html>
`;
}

/**
 * Bundles web/ with esbuild: one JS and one CSS file per page (CodeMirror and uPlot included, so
 * nothing is fetched from elsewhere), minified, with linked source maps. Output names carry esbuild's
 * content hash, so the files can be cached for good; the HTML shells name them and are revalidated.
 */
export async function buildWebBundle(): Promise<WebBundle> {
  const entryPoints = Object.fromEntries(
    Object.keys(PAGES).map((name) => [name, `${WEB_DIR}${name}/main.ts`]),
  );
  const result = await build({
    entryPoints,
    absWorkingDir: WEB_DIR,
    bundle: true,
    write: false,
    outdir: `${WEB_DIR}out`,
    entryNames: "[name]-[hash]",
    assetNames: "[name]-[hash]",
    format: "esm",
    platform: "browser",
    target: ["chrome109", "firefox115", "safari16"],
    minify: true,
    sourcemap: "linked",
    metafile: true,
    logLevel: "silent",
    charset: "utf8",
  });
  const outdir = `${WEB_DIR}out/`;
  const assets = new Map<string, Asset>();
  for (const file of result.outputFiles) {
    assets.set(file.path.slice(outdir.length), asset(file.path, Buffer.from(file.contents)));
  }
  const faviconName = `favicon-${createHash("sha256").update(FAVICON).digest("hex").slice(0, 8)}.svg`;
  assets.set(faviconName, asset(faviconName, FAVICON));

  const pages = new Map<PageName, Asset>();
  for (const [path, output] of Object.entries(result.metafile.outputs)) {
    if (!output.entryPoint) continue;
    const name = (Object.keys(PAGES) as PageName[]).find((p) => output.entryPoint === `${p}/main.ts`);
    if (!name) continue;
    const js = path.slice(path.lastIndexOf("/") + 1);
    const css = output.cssBundle?.slice(output.cssBundle.lastIndexOf("/") + 1);
    pages.set(name, asset(".html", pageHtml(name, js, css, faviconName)));
  }
  for (const name of Object.keys(PAGES) as PageName[]) {
    if (!pages.has(name)) throw new Error(`web bundle: no output for web/${name}/main.ts`);
  }
  return { assets, pages };
}

let bundle: Promise<WebBundle> | undefined;

/** The bundle, built once per process on first use; a failed build is tried again on the next request. */
export function webBundle(): Promise<WebBundle> {
  if (!bundle) {
    bundle = buildWebBundle();
    bundle.catch(() => {
      bundle = undefined;
    });
  }
  return bundle;
}
