import express, { type Request, type Response, type Router } from "express";
import { NotFoundError } from "../errors.js";
import { type Asset, PAGES, type PageName, webBundle } from "./assets.js";

/**
 * Same-origin only: scripts, styles, images and API calls from this service, nothing inline (CodeMirror
 * styles itself through constructed style sheets, uPlot through the CSSOM, both allowed by this),
 * no plugins, no framing, no <base>, forms only to this origin.
 */
export const CONTENT_SECURITY_POLICY = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data: blob:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** Sends an asset, gzipped when the client takes it; 304 when the client's copy is current. */
function send(req: Request, res: Response, asset: Asset, cacheControl: string) {
  const gzip = asset.gzip && /\bgzip\b/.test(req.get("accept-encoding") ?? "") ? asset.gzip : undefined;
  const etag = gzip?.etag ?? asset.etag;
  res.setHeader("content-type", asset.contentType);
  res.setHeader("etag", etag);
  res.setHeader("cache-control", cacheControl);
  res.setHeader("x-content-type-options", "nosniff");
  if (asset.gzip) res.setHeader("vary", "Accept-Encoding");
  const match = req.get("if-none-match")?.split(/\s*,\s*/) ?? [];
  if (match.some((t) => t === etag || t === `W/${etag}`)) {
    res.status(304).end();
    return;
  }
  if (gzip) res.setHeader("content-encoding", "gzip");
  const body = gzip?.body ?? asset.body;
  res.setHeader("content-length", String(body.length));
  res.status(200).end(req.method === "HEAD" ? undefined : body);
}

/**
 * The analysts' web pages: /console and /dashboards (HTML shells holding no data and no secret; the
 * pages call the API with the key the user enters) and their bundled assets under /assets/.
 */
export function webRouter(): Router {
  const router = express.Router();
  for (const name of Object.keys(PAGES) as PageName[]) {
    router.get(`/${name}`, async (req, res, next) => {
      try {
        const page = (await webBundle()).pages.get(name)!;
        res.setHeader("content-security-policy", CONTENT_SECURITY_POLICY);
        res.setHeader("referrer-policy", "no-referrer");
        res.setHeader("x-frame-options", "DENY");
        res.setHeader("cross-origin-opener-policy", "same-origin");
        send(req, res, page, "no-cache");
      } catch (err) {
        next(err);
      }
    });
  }
  router.get("/assets/:file", async (req, res, next) => {
    try {
      const file = (await webBundle()).assets.get(String(req.params.file));
      if (!file) throw new NotFoundError("Not Found");
      // The names carry a content hash: a changed file is a new name.
      send(req, res, file, "public, max-age=31536000, immutable");
    } catch (err) {
      next(err);
    }
  });
  return router;
}
