import { z } from "zod";
import { SCOPES } from "../keys/scopes.js";
import type { RouteDef } from "./route.js";

type Json = Record<string, unknown>;

const toSchema = (schema: z.ZodType, io: "input" | "output"): Json =>
  z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as Json;

const standardError = {
  type: "object",
  required: ["message"],
  properties: {
    message: { type: "string" },
    errors: {
      type: "array",
      items: {
        type: "object",
        properties: {
          message: { type: "string" },
          key: { type: "string" },
          path: { type: "array", items: { type: "string" } },
        },
      },
    },
    requestId: { type: "string", description: "present on 5xx" },
  },
};

const eventsError = {
  type: "object",
  properties: {
    requestId: { type: "string" },
    message: { type: "string" },
    error: {
      type: "object",
      properties: {
        code: { type: "string" },
        message: { type: "string" },
        details: {
          type: "array",
          items: {
            type: "object",
            properties: {
              message: { type: "string" },
              index: { type: "integer" },
              field: { type: "string" },
            },
          },
        },
      },
    },
  },
};

/** Express `:param` paths → OpenAPI `{param}` paths. */
const openapiPath = (path: string) => path.replace(/:([A-Za-z0-9_]+)/g, "{$1}");

function parameters(def: RouteDef): Json[] {
  const out: Json[] = [];
  for (const [where, schema] of [
    ["path", def.params],
    ["query", def.query],
  ] as const) {
    if (!schema) continue;
    const js = toSchema(schema, "input") as { properties?: Record<string, Json>; required?: string[] };
    for (const [name, s] of Object.entries(js.properties ?? {})) {
      out.push({
        name,
        in: where,
        required: where === "path" || (js.required ?? []).includes(name),
        schema: s,
        ...(typeof s.description === "string" ? { description: s.description } : {}),
      });
    }
  }
  return out;
}

/** The OpenAPI 3.1 document, generated from the route table's zod schemas on every start. */
export function buildOpenApi(routes: readonly RouteDef[], version: string): Json {
  const paths: Record<string, Record<string, Json>> = {};
  for (const def of routes) {
    const errorBody = def.errorEnvelope === "events" ? eventsError : standardError;
    const responses: Record<string, Json> = {
      "200": {
        description: "Success",
        content: def.produces
          ? { [def.produces]: {} }
          : {
              "application/json": {
                schema: def.response ? toSchema(def.response, "output") : { type: "object" },
              },
            },
      },
    };
    const err = (description: string, schema: Json = errorBody) => ({
      description,
      content: { "application/json": { schema } },
    });
    if (def.body || def.query || def.params) responses["400"] = err("Validation error naming the field");
    if (def.auth !== "public") {
      responses["401"] = err("Missing or malformed x-api-key / x-pixel-id", standardError);
      responses["403"] = err(
        "Key unknown, revoked, expired, of another pixel, pixel inactive, or scope missing",
        standardError,
      );
    }
    if (def.body) responses["413"] = err("Body over the route's limit");
    if (def.rateLimit) responses["429"] = err("Too many requests; retry after Retry-After seconds");
    for (const [status, description] of Object.entries(def.responses ?? {})) {
      responses[status] = err(description, status === "401" || status === "403" ? standardError : errorBody);
    }
    paths[openapiPath(def.path)] ??= {};
    paths[openapiPath(def.path)]![def.method] = {
      tags: [def.tag],
      summary: def.summary,
      ...(def.description ? { description: def.description } : {}),
      ...(def.auth === "public" ? { security: [] } : {}),
      ...(def.auth !== "public"
        ? { "x-required-scope": def.auth === "any-key" ? "any active key" : def.auth }
        : {}),
      parameters: parameters(def),
      ...(def.body
        ? {
            requestBody: {
              required: true,
              content: Object.fromEntries(
                ["application/json", ...(def.consumes ?? [])].map((type) => [
                  type,
                  { schema: toSchema((def.bodyDoc ?? def.body)!, "input") },
                ]),
              ),
            },
          }
        : {}),
      responses,
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "pixelhouse API",
      version,
      description:
        "Analytics for e-commerce tracking pixels. Every request carries `x-api-key` and `x-pixel-id`. " +
        `Scopes: ${SCOPES.join(", ")}; legacy db_query and attribution_query expand to analytics:read.`,
    },
    servers: [{ url: "/" }],
    components: {
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
        pixelId: { type: "apiKey", in: "header", name: "x-pixel-id" },
      },
    },
    security: [{ apiKey: [], pixelId: [] }],
    paths,
  };
}
