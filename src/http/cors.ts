import type { RequestHandler } from "express";

/**
 * Preflight for the browser collector. The origin is checked against the pixel's allowlist on the
 * POST itself (the pixel id travels in the body, which a preflight does not carry).
 */
export const collectPreflight: RequestHandler = (req, res) => {
  const origin = req.headers.origin;
  if (origin) {
    res.setHeader("Access-Control-Allow-Origin", origin);
    res.setHeader("Vary", "Origin");
  }
  res.setHeader("Access-Control-Allow-Methods", "POST");
  res.setHeader("Access-Control-Allow-Headers", "content-type");
  res.setHeader("Access-Control-Max-Age", "86400");
  res.status(204).end();
};
