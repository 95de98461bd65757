import type { ErrorRequestHandler, RequestHandler } from "express";
import { match } from "path-to-regexp";
import {
  AccessDeniedError,
  AppError,
  type EventIssue,
  MethodNotAllowedError,
  NotFoundError,
  UnavailableError,
  ValidationError,
} from "../errors.js";
import type { Logger } from "../log.js";
import { storeUnavailable } from "../metrics.js";
import { KvUnavailableError } from "../stores/kv/port.js";
import { SqlUnavailableError } from "../stores/sql/port.js";
import { WarehouseUnavailableError } from "../stores/warehouse/port.js";
import type { RouteDef } from "./route.js";

/** After every route: a known path with another method is 405, anything else 404 — both JSON. */
export function unmatched(routes: readonly RouteDef[]): RequestHandler {
  const matchers = routes.map((r) => ({ method: r.method.toUpperCase(), test: match(r.path) }));
  return (req, _res, next) => {
    const allow = new Set<string>();
    for (const m of matchers) if (m.test(req.path)) allow.add(m.method);
    if (allow.size === 0) return next(new NotFoundError("Not Found"));
    if (allow.has("GET")) allow.add("HEAD");
    next(new MethodNotAllowedError([...allow].sort()));
  };
}

const EVENT_CODES: Record<number, string> = {
  400: "VALIDATION_ERROR",
  404: "NOT_FOUND",
  405: "METHOD_NOT_ALLOWED",
  413: "PAYLOAD_TOO_LARGE",
  429: "RATE_LIMITED",
  500: "INTERNAL_ERROR",
  503: "SERVICE_UNAVAILABLE",
};

/** A problem with the request envelope itself (`events` missing, too many…) has no event: index -1. */
function envelopeIssue(issue: { message: string; path: string[] }): EventIssue {
  const [first, second, ...rest] = issue.path;
  if (first === "events" && second !== undefined && /^\d+$/.test(second)) {
    return { message: issue.message, index: Number(second), field: rest.join(".") };
  }
  return { message: issue.message, index: -1, field: issue.path.join(".") };
}

const OUTAGES = [
  [SqlUnavailableError, "Service Unavailable: the SQL store is not reachable", "sql"],
  [WarehouseUnavailableError, "Service Unavailable: the warehouse is not reachable", "warehouse"],
  [KvUnavailableError, "Service Unavailable: the cache store is not reachable", "kv"],
] as const;

/**
 * A store outage, thrown as is or as the cause of another error (up to a few levels), becomes 503.
 * Retry-After is the store's breaker cool-down left when the breaker refused the call, else 1 s.
 */
function storeOutage(err: unknown): UnavailableError | null {
  let e: unknown = err;
  for (let depth = 0; depth < 4 && e instanceof Error; depth++, e = e.cause) {
    for (const [type, message, store] of OUTAGES) {
      if (!(e instanceof type)) continue;
      storeUnavailable.inc({ store });
      const ms = e.retryAfterMs;
      return new UnavailableError(message, ms === undefined ? 1 : Math.max(1, Math.ceil(ms / 1000)));
    }
  }
  return null;
}

/**
 * The only place errors become responses. AppErrors carry their status and body; store outages are
 * 503 with Retry-After; anything else is a 500 that names the request id and nothing internal.
 */
export function errorHandler(log: Logger): ErrorRequestHandler {
  return (err, req, res, _next) => {
    const requestId = String(res.locals.requestId ?? "");
    const known: AppError | null = err instanceof AppError ? err : storeOutage(err);
    if (res.headersSent) {
      log.error({ err, requestId }, "error after the response started");
      res.destroy();
      return;
    }
    const status = known?.status ?? 500;
    if (!known) log.error({ err, requestId, method: req.method, path: req.path }, "unhandled error");
    else if (err instanceof AccessDeniedError)
      log.info({ requestId, reason: err.reason, path: req.path }, "key refused");
    else if (status >= 500) log.warn({ err: err as Error, requestId }, known.message);
    for (const [name, value] of Object.entries(known?.headers() ?? {})) res.setHeader(name, value);
    const events = res.locals.errorEnvelope === "events" && status !== 401 && status !== 403;
    let body: Record<string, unknown>;
    if (events) {
      const message = known?.message ?? "Internal Server Error";
      const details: EventIssue[] =
        (known as { eventIssues?: EventIssue[] } | null)?.eventIssues ??
        (known instanceof ValidationError ? known.issues.map(envelopeIssue) : []);
      const code = known?.code ?? EVENT_CODES[status] ?? "ERROR";
      body = { requestId, message, error: { code, message, details } };
    } else if (known) {
      body = known.body();
      if (status >= 500) body.requestId = requestId;
    } else {
      body = { message: "Internal Server Error", requestId };
    }
    res.status(status).json(body);
  };
}
