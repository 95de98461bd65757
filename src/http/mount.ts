import { randomUUID } from "node:crypto";
import type { Express, NextFunction, Request, RequestHandler, Response } from "express";
import type { z } from "zod";
import { ForbiddenError, MissingScopeError, ValidationError } from "../errors.js";
import type { ApiKeyService, Principal } from "../keys/service.js";
import type { Logger } from "../log.js";
import { httpRequests } from "../metrics.js";
import { parseJsonBody } from "../shared/json.js";
import { findUnstorableText } from "../shared/text.js";
import { parseWith } from "../shared/validate.js";
import type { BucketRule, KvStore } from "../stores/kv/port.js";
import { readRawBody } from "./json-body.js";
import { enforceRateLimit } from "./rate-limit.js";
import type { RouteDef } from "./route.js";

const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** Every response carries `x-request-id` (a UUID); it is logged with the request's outcome. */
export function requestId(log: Logger): RequestHandler {
  return (req, res, next) => {
    const id = randomUUID();
    const started = performance.now();
    res.locals.requestId = id;
    res.setHeader("x-request-id", id);
    res.on("finish", () => {
      log.info(
        {
          requestId: id,
          method: req.method,
          path: req.path,
          status: res.statusCode,
          ms: +(performance.now() - started).toFixed(1),
        },
        "request",
      );
    });
    next();
  };
}

const header = (req: Request, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
};

export interface MountDeps {
  keys: ApiKeyService;
  kv: KvStore;
  rates: Record<"ingest" | "query", BucketRule>;
}

/** Turns the route table into express routes: authenticate → rate limit → read body (limit before parse) → validate → handle. */
export function mountRoutes(app: Express, routes: readonly RouteDef[], deps: MountDeps): void {
  for (const def of routes) {
    app[def.method](def.path, async (req: Request, res: Response, next: NextFunction) => {
      res.on("finish", () =>
        httpRequests.inc({
          route: def.path,
          method: def.method,
          status: `${Math.floor(res.statusCode / 100)}xx`,
        }),
      );
      try {
        if (def.errorEnvelope) res.locals.errorEnvelope = def.errorEnvelope;
        let principal: Principal | undefined;
        if (def.auth !== "public") {
          principal = await deps.keys.authenticate(header(req, "x-api-key"), header(req, "x-pixel-id"));
          if (def.auth !== "any-key" && !principal.scopes.has(def.auth))
            throw new MissingScopeError(def.auth);
          if (def.rateLimit) {
            await enforceRateLimit(deps.kv, res, def.rateLimit, principal.keyId, deps.rates[def.rateLimit]);
          }
        }
        const rawBody =
          def.body && req.method !== "GET" && req.method !== "HEAD"
            ? parseJsonBody(await readRawBody(req, def.bodyLimit ?? DEFAULT_BODY_LIMIT))
            : undefined;
        const ctx = {
          body: def.body ? validInput(def.body, rawBody, def.bodyItems) : undefined,
          query: def.query ? validInput(def.query, { ...req.query }) : undefined,
          params: def.params ? validInput(def.params, { ...req.params }) : undefined,
          principal: principal as Principal,
          requestId: String(res.locals.requestId),
          req,
          res,
        };
        const result = await def.handler(ctx);
        if (result !== undefined && !res.headersSent) res.status(200).json(result);
      } catch (err) {
        next(err);
      }
    });
  }
}

/**
 * The input as its schema parses it, once the raw input also holds only text the stores can keep (no
 * NUL, no lone surrogate; shared/text.ts): one check for every route's body, query and path
 * parameters, after the schema so its own, more specific messages come first. `items` names a body
 * key whose entries the handler validates one by one, text included, reporting each by its index.
 */
function validInput<T>(schema: z.ZodType<T>, raw: unknown, items?: string): T {
  const parsed = parseWith(schema, raw);
  let scope = raw;
  if (items && raw !== null && typeof raw === "object" && items in raw) {
    const { [items]: _validatedLater, ...rest } = raw as Record<string, unknown>;
    scope = rest;
  }
  const found = findUnstorableText(scope);
  if (found) {
    const path = found.path.map(String);
    const key = path.join(".");
    throw new ValidationError([{ message: `${key || "body"}: ${found.message}`, key, path }]);
  }
  return parsed;
}

/** Body `pixelId` must name the header's pixel (403 otherwise). */
export function assertPixelMatches(bodyPixelId: string | undefined, principal: Principal): void {
  if (bodyPixelId !== undefined && bodyPixelId !== principal.pixelId) {
    throw new ForbiddenError("pixelId does not match x-pixel-id");
  }
}
