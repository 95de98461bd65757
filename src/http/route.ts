import type { Request, Response } from "express";
import type { z } from "zod";
import type { Scope } from "../keys/scopes.js";
import type { Principal } from "../keys/service.js";

/** Who may call a route: a scope, any active key of the pixel, or anyone (probes, docs). */
export type RouteAuth = Scope | "any-key" | "public";

export interface RouteContext<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  /** Set for every route whose auth is not "public". */
  principal: Principal;
  requestId: string;
  /** For the few routes that stream or set headers; services never see it. */
  res: Response;
  req: Request;
}

/** A handler's answer: a JSON body (status 200), or `undefined` when it wrote the response itself. */
export type RouteResult = object | undefined;

export interface RouteDef<B = unknown, Q = unknown, P = unknown> {
  method: "get" | "post" | "put" | "patch" | "delete";
  /** Express 5 path syntax (`/views/:id`). */
  path: string;
  auth: RouteAuth;
  summary: string;
  tag: string;
  description?: string;
  body?: z.ZodType<B>;
  query?: z.ZodType<Q>;
  params?: z.ZodType<P>;
  /** Documents the request body in OpenAPI when `body` only checks the envelope (items validated later). */
  bodyDoc?: z.ZodType;
  /** Content types the body may come in besides JSON (documentation only). */
  consumes?: string[];
  /** Further statuses the route can answer, for OpenAPI (`{"503": "…"}`). */
  responses?: Record<string, string>;
  /** Documents the 200 body in OpenAPI. */
  response?: z.ZodType;
  /** Raw body limit in bytes (default 1 MiB). */
  bodyLimit?: number;
  /**
   * A body key (an array) whose entries the handler validates one by one, text included, so each
   * problem is reported by its index (sync records, events): the edge's check for text the stores
   * cannot hold leaves that key to it.
   */
  bodyItems?: string;
  /** `events` answers errors in the events API envelope (docs/errors.md). */
  errorEnvelope?: "standard" | "events";
  /** Which per-key token bucket the route draws from (none when absent). */
  rateLimit?: "ingest" | "query";
  /** Content types other than JSON this route produces (documentation only). */
  produces?: string;
  handler(ctx: RouteContext<B, Q, P>): Promise<RouteResult> | RouteResult;
}

/** Keeps each route's type parameters while collecting them into one table. */
export function route<B = undefined, Q = undefined, P = undefined>(def: RouteDef<B, Q, P>): RouteDef {
  return def as unknown as RouteDef;
}
