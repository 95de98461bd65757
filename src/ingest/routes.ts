import { z } from "zod";
import { AccessDeniedError, ForbiddenError } from "../errors.js";
import { assertPixelMatches } from "../http/mount.js";
import { bucketRule, enforceRateLimit } from "../http/rate-limit.js";
import { route } from "../http/route.js";
import { originAllowed } from "../pixels/origins.js";
import type { PixelService } from "../pixels/service.js";
import type { KvStore } from "../stores/kv/port.js";
import { pixelScript } from "./browser/script.js";
import { clientIpFromRequest } from "./enrich/ip.js";
import type { IngestContext } from "./normalize.js";
import {
  collectEnvelopeSchema,
  EVENTS_BODY_LIMIT,
  eventSchema,
  eventsEnvelopeSchema,
  ingestResponseSchema,
} from "./schema.js";
import type { IngestService } from "./service.js";

export interface IngestRouteDeps {
  ingest: IngestService;
  pixels: PixelService;
  kv: KvStore;
  ipPrefix: IngestContext["ipPrefix"];
  trustProxy: boolean;
  collectPerSecond: number;
}

export function ingestRoutes(deps: IngestRouteDeps) {
  const collectRule = bucketRule(deps.collectPerSecond);
  return [
    route({
      method: "post",
      path: "/tr/api/events",
      auth: "events:write",
      tag: "Ingestion",
      summary: "Ingest server-side events (1-100 per request)",
      description:
        "Body limit 131072 bytes on the raw bytes. Acknowledged (200) only after the events are durably " +
        "written. `eventId` deduplicates within 30 days; `ipAddress`, `userAgent` and `locale` come only " +
        "from the body. Optional `timestamp` (ISO-8601 with offset, at most 10 minutes ahead) is when the " +
        "event happened; it defaults to the receive time. Extra keys are kept as properties. The body may " +
        "come gzip or deflate compressed (Content-Encoding); the limit holds for the decompressed size too.",
      body: eventsEnvelopeSchema,
      bodyDoc: z.object({ pixelId: z.string().optional(), events: z.array(eventSchema).min(1).max(100) }),
      bodyLimit: EVENTS_BODY_LIMIT,
      bodyItems: "events",
      errorEnvelope: "events",
      rateLimit: "ingest",
      responses: {
        "415": "A Content-Encoding other than gzip or deflate (Accept-Encoding names those)",
        "503": "A store did not answer; nothing of the request was stored: retry after Retry-After",
      },
      response: ingestResponseSchema,
      handler: async ({ body, principal, requestId }) => {
        assertPixelMatches(body.pixelId, principal);
        const ctx: IngestContext = {
          pixelId: principal.pixelId,
          origin: "server",
          requestId,
          receivedAtMs: Date.now(),
          ipPrefix: deps.ipPrefix,
        };
        const result = await deps.ingest.ingest(ctx, body.events);
        return { requestId, ...result };
      },
    }),
    route({
      method: "post",
      path: "/tr/api/collect",
      auth: "public",
      tag: "Ingestion",
      summary: "Browser collector used by pixel.js (no secret: pixel id + allowed origins)",
      description:
        "CORS endpoint for browsers. The request's Origin must be one of the pixel's allowed origins " +
        "(`pixelhouse pixel origins`). Accepts `text/plain` JSON so `navigator.sendBeacon` works. IP and " +
        "user agent come from the connection. Rate-limited per pixel and browser IP.",
      body: collectEnvelopeSchema,
      bodyDoc: z.object({ pixelId: z.string(), events: z.array(eventSchema).min(1).max(100) }),
      consumes: ["text/plain"],
      bodyLimit: EVENTS_BODY_LIMIT,
      bodyItems: "events",
      errorEnvelope: "events",
      responses: {
        "403": "Unknown or inactive pixel, or an Origin the pixel does not allow",
        "429": "Too many requests from this browser IP for this pixel; retry after Retry-After seconds",
        "503": "A store did not answer; nothing of the request was stored",
      },
      response: ingestResponseSchema,
      handler: async ({ body, req, res, requestId }) => {
        const origin = req.headers.origin;
        const pixel = await deps.pixels.get(body.pixelId);
        if (pixel?.status !== "active") throw new AccessDeniedError("unknown or inactive pixel");
        if (!(origin && originAllowed(origin, pixel.allowedOrigins))) {
          throw new ForbiddenError(`origin ${origin ?? "(none)"} is not allowed for this pixel`);
        }
        res.setHeader("Access-Control-Allow-Origin", origin);
        res.setHeader("Vary", "Origin");
        const ip = clientIpFromRequest(
          req.socket.remoteAddress,
          header(req.headers["x-forwarded-for"]),
          deps.trustProxy,
        );
        await enforceRateLimit(deps.kv, res, "collect", `${pixel.id}:${ip}`, collectRule);
        const ctx: IngestContext = {
          pixelId: pixel.id,
          origin: "browser",
          requestId,
          receivedAtMs: Date.now(),
          ipPrefix: deps.ipPrefix,
          connection: { ip, userAgent: header(req.headers["user-agent"]) ?? "" },
        };
        const result = await deps.ingest.ingest(ctx, body.events);
        return { requestId, ...result };
      },
    }),
    route({
      method: "get",
      path: "/tr/pixel.js",
      auth: "public",
      tag: "Ingestion",
      summary: "The browser pixel script",
      description:
        'Embed with `<script async src="/tr/pixel.js" data-pixel-id="PIXEL_ID"></script>`; then ' +
        "`pixelhouse('track', name, props, {eventId})`.",
      produces: "application/javascript",
      response: z.string(),
      handler: ({ res }) => {
        res.setHeader("Content-Type", "application/javascript; charset=utf-8");
        res.setHeader("Cache-Control", "public, max-age=3600");
        res.send(pixelScript());
        return undefined;
      },
    }),
  ];
}

function header(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
