/**
 * Bad input against every route of the route table: NUL, lone surrogates, malformed percent-encoding,
 * extreme numbers and dates in every path parameter, query parameter and body field a route takes, and
 * bodies that are not UTF-8, compressed wrongly or nested too deep. No answer may be a 5xx, and every
 * error answer is JSON with a message.
 *
 * The fields come from the routes' zod schemas (as JSON Schema), so a new route or field is swept
 * without being listed here. Each case starts from a base request the schema accepts, built from the
 * schema too (a few values no schema can express, such as a measure key, come from HINTS), so the bad
 * value is the request's only problem and travels as far as the service would let it.
 */
import { randomUUID } from "node:crypto";
import { Agent, request } from "node:http";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import type { RouteDef } from "../../src/http/route.js";
import { SCOPES } from "../../src/keys/scopes.js";
import { routeTable } from "../../src/routes.js";
import { startTestApp, type TestApp } from "../helpers/app.js";

/** The parts of a JSON Schema (as z.toJSONSchema writes it) the sweep reads. */
interface Js {
  $ref?: string;
  $defs?: Record<string, Js>;
  type?: string;
  properties?: Record<string, Js>;
  required?: string[];
  additionalProperties?: unknown;
  items?: Js;
  anyOf?: Js[];
  oneOf?: Js[];
  enum?: unknown[];
  const?: unknown;
  format?: string;
  pattern?: string;
  minLength?: number;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: number;
  exclusiveMaximum?: number;
  minItems?: number;
  maxItems?: number;
}
type Path = (string | number)[];

/** A JSON literal sent as written (JSON.stringify cannot write -0, 1e400 or 2^63 exactly). */
class Raw {
  constructor(readonly text: string) {}
}
const raw = (text: string) => new Raw(text);

/** Text the stores cannot hold, and numbers in disguise: every text field gets these. */
const TEXT: unknown[] = ["a\u0000b", "\ud800", "x\udfffy", "NaN", "1e308", raw("1e308")];
/** Dates the warehouse cannot hold, or no date at all: text fields that take a date or time get these too. */
const DATES: unknown[] = [
  "0001-01-01",
  "9999-12-31",
  "2024-02-30",
  "0001-01-01T00:00:00Z",
  "9999-12-31T23:59:59.999+14:00",
  "+275760-09-13T00:00:00.000Z",
];
const NUMBERS: unknown[] = [
  raw("1e308"),
  raw("-1e308"),
  raw("-0"),
  raw("9223372036854775808"),
  raw("1e400"),
  raw("5e-324"),
  raw("99999999999999.99"),
  "NaN",
  "9223372036854775808",
];
/** For fields that are neither text nor numbers (objects, arrays, booleans, anything): a sample of both. */
const MIXED: unknown[] = ["a\u0000b", "\ud800", "0001-01-01", raw("1e308"), raw("-0"), raw("1e400")];
/** Raw text put into a path segment or a query value, exactly as sent. */
const URL_TEXT = [
  "%FF",
  "%E0%A4%A",
  "%ED%A0%80",
  "%C0%AF",
  "%00",
  "a%00b",
  "%",
  "%zz",
  "1e308",
  "-0",
  "9223372036854775808",
  "NaN",
  "0001-01-01",
  "9999-12-31",
];

const ORIGIN = "http://sweep.test";
const CONCURRENCY = 6;

let app: TestApp;
let px: Awaited<ReturnType<TestApp["pixelWithKey"]>>;
let routes: RouteDef[];
/** Values no schema can express (a key of the measures catalog, an IANA zone…), by property name. */
let HINTS: Record<string, unknown>;

beforeAll(async () => {
  app = await startTestApp({
    env: { RATE_INGEST_PER_SEC: "1000000", RATE_QUERY_PER_SEC: "1000000", RATE_COLLECT_PER_SEC: "1000000" },
  });
  px = await app.pixelWithKey([...SCOPES]);
  await app.services.pixels.updateOrigins(px.pixelId, [ORIGIN], []);
  routes = routeTable(app.services, app.stores, app.config);
  HINTS = {
    pixelId: px.pixelId,
    timezone: "UTC",
    measure: "orders.count",
    measures: ["orders.count"],
    dimension: "attribution.channel",
    sql: "SELECT 1",
  };
});
afterAll(() => app?.close());

// ── JSON Schema: examples and fields ──────────────────────────────────────────────────────────────

const jsonSchema = (s: z.ZodType): Js => z.toJSONSchema(s, { io: "input", unrepresentable: "any" }) as Js;

function deref(s: Js, root: Js): Js {
  let node = s;
  for (let hops = 0; node?.$ref && hops < 10; hops++) {
    const ref = String(node.$ref);
    node = ref === "#" ? root : (root.$defs?.[ref.replace("#/$defs/", "")] ?? {});
  }
  return node ?? {};
}

/** The alternatives of a union node, null left out; the node itself otherwise. */
function options(s: Js): Js[] {
  const alts = (s.anyOf ?? s.oneOf) as Js[] | undefined;
  return alts ? alts.filter((a) => a.type !== "null") : [s];
}

const isText = (s: Js) => s.type === "string";
const isNumber = (s: Js) => s.type === "number" || s.type === "integer";

function exampleString(s: Js): string {
  if (s.format === "date") return "2024-01-15";
  if (s.format === "date-time") return "2024-01-15T10:00:00Z";
  if (s.format === "uuid") return randomUUID();
  const min = Math.max(1, s.minLength ?? 1);
  const candidates = ["x".repeat(min), "USD", "US", "facebook", "a1", "2024-01-15", "2024-01-15T10:00:00Z"];
  if (!s.pattern) return candidates[0]!;
  const re = new RegExp(s.pattern, "u");
  return candidates.find((c) => re.test(c)) ?? candidates[0]!;
}

function exampleNumber(s: Js): number {
  const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + 1 : undefined);
  const hi = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - 1 : undefined);
  let v = 1;
  if (lo !== undefined && v < lo) v = lo;
  if (hi !== undefined && v > hi) v = hi;
  return v;
}

/**
 * The smallest value the schema takes: required keys only, arrays at their minimum length. In a body,
 * an object without required keys gets its first one (partial updates must change something).
 */
function minimal(node: Js, root: Js, key?: string | number, depth = 0, body = true): unknown {
  if (typeof key === "string" && key in HINTS) return HINTS[key];
  const s = deref(node, root);
  if ("const" in s) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  const [first] = options(s);
  if (first !== s) return minimal(first ?? {}, root, key, depth, body);
  if (s.type === "object" || s.properties) {
    const props = Object.keys(s.properties ?? {});
    const keys = (s.required ?? []) as string[];
    const out: Record<string, unknown> = {};
    for (const k of keys.length || !body ? keys : props.slice(0, 1))
      out[k] = minimal(s.properties?.[k] ?? {}, root, k, depth + 1, body);
    return out;
  }
  if (s.type === "array") {
    const n = Math.max(s.minItems ?? 0, 0);
    return depth > 6
      ? []
      : Array.from({ length: n }, () => minimal(s.items ?? {}, root, undefined, depth + 1, body));
  }
  if (isText(s)) return exampleString(s);
  if (isNumber(s)) return exampleNumber(s);
  if (s.type === "boolean") return true;
  if (s.type === "null") return null;
  return "x";
}

interface Field {
  path: Path;
  schema: Js;
}

/** Every property path under a node (arrays at index 0; unions through their first alternative). */
function fields(node: Js, root: Js, path: Path = [], out: Field[] = []): Field[] {
  const s = deref(node, root);
  if (path.length > 8) return out;
  const [first] = options(s);
  if (first !== s) return fields(first ?? {}, root, path, out);
  if (s.type === "object" || s.properties) {
    for (const [k, child] of Object.entries((s.properties ?? {}) as Record<string, Js>)) {
      out.push({ path: [...path, k], schema: deref(child, root) });
      fields(child, root, [...path, k], out);
    }
  } else if (s.type === "array" && s.items) {
    out.push({ path: [...path, 0], schema: deref(s.items, root) });
    fields(s.items, root, [...path, 0], out);
  }
  return out;
}

const takesDates = (s: Js) =>
  s.format === "date" || s.format === "date-time" || /\\d\{4\}|\\d\\d/.test(String(s.pattern ?? ""));

/** The bad values a field of this schema gets. */
function badValues(field: Js, root: Js): unknown[] {
  const alts = options(deref(field, root)).map((a) => deref(a, root));
  const text = alts.filter(isText);
  const number = alts.some(isNumber);
  const out: unknown[] = [];
  if (text.length) out.push(...TEXT);
  if (text.some(takesDates)) out.push(...DATES);
  if (number) out.push(...NUMBERS);
  if (!text.length && !number) out.push(...MIXED);
  // Keys are text too: an object that keeps keys it does not know gets bad ones.
  const open = alts.some(
    (a) =>
      a.type === undefined || ((a.type === "object" || a.properties) && a.additionalProperties !== false),
  );
  if (open && !text.length && !number) out.push({ "k\u0000": "v" }, { "\ud800": 1 });
  return out;
}

/** `base` with `value` at `path`; missing parents are filled with their minimal values. */
function place(base: unknown, path: Path, value: unknown, schemaAt: Map<string, Js>, root: Js): unknown {
  const top = structuredClone(base ?? {}) as Record<string | number, unknown>;
  let cur: Record<string | number, unknown> = top;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i]!;
    if (cur[k] === null || typeof cur[k] !== "object") {
      const parent = schemaAt.get(JSON.stringify(path.slice(0, i + 1)));
      cur[k] = parent ? minimal(parent, root, k) : typeof path[i + 1] === "number" ? [] : {};
    }
    const next = cur[k] as Record<string | number, unknown>;
    if (Array.isArray(next) && next.length === 0) {
      const item = schemaAt.get(JSON.stringify(path.slice(0, i + 2)));
      next.push(item ? minimal(item, root) : {});
    }
    cur = next;
  }
  cur[path.at(-1)!] = value;
  return top;
}

/** JSON text with Raw literals written as they are. */
function serialize(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(value, (_k, v) => {
    if (v instanceof Raw) {
      raws.push(v.text);
      return `@@raw${raws.length - 1}@@`;
    }
    return v;
  });
  return (text ?? "null").replace(/"@@raw(\d+)@@"/g, (_m, i) => raws[Number(i)]!);
}

const describeValue = (v: unknown) => (v instanceof Raw ? v.text : JSON.stringify(v));

// ── Requests ──────────────────────────────────────────────────────────────────────────────────────

interface Case {
  label: string;
  method: string;
  path: string;
  body?: Buffer;
  headers?: Record<string, string>;
}

interface Answer {
  status: number;
  contentType: string;
  text: string;
}

const agent = new Agent({ keepAlive: true, maxSockets: CONCURRENCY });

/** node:http rather than fetch: the path and the body bytes go out exactly as written. */
function send(c: Case, route: RouteDef): Promise<Answer> {
  const url = new URL(app.url);
  const headers: Record<string, string> = { origin: ORIGIN, ...c.headers };
  if (route.auth !== "public") {
    headers["x-api-key"] = px.key;
    headers["x-pixel-id"] = px.pixelId;
  }
  if (c.body) {
    headers["content-type"] ??= "application/json";
    headers["content-length"] = String(c.body.length);
  }
  return new Promise((resolve, reject) => {
    const req = request(
      { host: url.hostname, port: url.port, method: c.method, path: c.path, headers, agent },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (d: Buffer) => chunks.push(d));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            contentType: String(res.headers["content-type"] ?? ""),
            text: Buffer.concat(chunks).toString("utf8"),
          }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(c.body);
  });
}

/** What is wrong with an answer to bad input, or null. */
function problem(a: Answer): string | null {
  if (a.status >= 500) return `answered ${a.status}: ${a.text.slice(0, 300)}`;
  if (a.status < 400) return null;
  if (!a.contentType.startsWith("application/json")) return `${a.status} is not JSON (${a.contentType})`;
  try {
    const body = JSON.parse(a.text) as { message?: unknown };
    return typeof body.message === "string" && body.message !== ""
      ? null
      : `${a.status} has no message: ${a.text.slice(0, 200)}`;
  } catch {
    return `${a.status} body does not parse: ${a.text.slice(0, 200)}`;
  }
}

/** Runs the cases a few at a time; answers with every failure, labelled. */
async function sweep(cases: { route: RouteDef; c: Case }[]): Promise<string[]> {
  const failures: string[] = [];
  let next = 0;
  const worker = async () => {
    while (next < cases.length) {
      const { route, c } = cases[next++]!;
      const p = problem(await send(c, route));
      if (p) failures.push(`${c.method} ${route.path} — ${c.label}: ${p}`);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
  return failures;
}

// ── Cases per route ───────────────────────────────────────────────────────────────────────────────

const hasBody = (r: RouteDef) => !!r.body && r.method !== "get";

/** The route's path with each parameter at its minimal value, or with `raw` as sent in one of them. */
function concretePath(r: RouteDef, override?: { name: string; raw: string }): string {
  const root = r.params ? jsonSchema(r.params) : {};
  return r.path.replace(/:([A-Za-z0-9_]+)/g, (_m, name: string) =>
    override?.name === name
      ? override.raw
      : encodeURIComponent(String(minimal(root.properties?.[name] ?? {}, root, name, 0, false))),
  );
}

/** Required query parameters only: optional ones (explain=true…) would change what the route does. */
function baseQuery(r: RouteDef): Record<string, unknown> {
  if (!r.query) return {};
  const root = jsonSchema(r.query);
  return minimal(root, root, undefined, 0, false) as Record<string, unknown>;
}

const queryString = (q: Record<string, unknown>, extra?: string) => {
  const parts = Object.entries(q).map(
    ([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`,
  );
  if (extra) parts.push(extra);
  return parts.length ? `?${parts.join("&")}` : "";
};

interface BodyPlan {
  root: Js;
  base: unknown;
  fields: Field[];
  schemaAt: Map<string, Js>;
}

const plans = new Map<RouteDef, BodyPlan[]>();

/** One plan per top-level alternative of the body schema (cost lines are a union of shapes). */
function bodyPlans(r: RouteDef): BodyPlan[] {
  const found = plans.get(r) ?? makePlans(r);
  plans.set(r, found);
  return found;
}

function makePlans(r: RouteDef): BodyPlan[] {
  if (!hasBody(r)) return [];
  const root = jsonSchema(r.bodyDoc ?? r.body!);
  return options(deref(root, root)).map((alt) => {
    const all = fields(alt, root);
    return {
      root,
      base: minimal(alt, root),
      fields: all,
      schemaAt: new Map(all.map((f) => [JSON.stringify(f.path), f.schema])),
    };
  });
}

function baseCase(r: RouteDef): Case {
  const plan = bodyPlans(r)[0];
  return {
    label: "base request",
    method: r.method.toUpperCase(),
    path: concretePath(r) + queryString(baseQuery(r)),
    ...(plan ? { body: Buffer.from(serialize(plan.base)) } : {}),
  };
}

function pathCases(r: RouteDef): Case[] {
  const names = [...r.path.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
  const body = bodyPlans(r)[0];
  return names.flatMap((name) =>
    URL_TEXT.map((text) => ({
      label: `path parameter ${name} = ${text}`,
      method: r.method.toUpperCase(),
      path: concretePath(r, { name, raw: text }) + queryString(baseQuery(r)),
      ...(body ? { body: Buffer.from(serialize(body.base)) } : {}),
    })),
  );
}

function queryCases(r: RouteDef): Case[] {
  if (!r.query) return [];
  const root = jsonSchema(r.query);
  const base = baseQuery(r);
  const body = bodyPlans(r)[0];
  return Object.keys(root.properties ?? {}).flatMap((name) => {
    const rest = Object.fromEntries(Object.entries(base).filter(([k]) => k !== name));
    return [...URL_TEXT, `${encodeURIComponent(String(base[name] ?? "x"))}&${name}=again`].map((text) => ({
      label: `query ${name} = ${text}`,
      method: r.method.toUpperCase(),
      path: concretePath(r) + queryString(rest, `${name}=${text}`),
      ...(body ? { body: Buffer.from(serialize(body.base)) } : {}),
    }));
  });
}

interface Mutation {
  label: string;
  body: unknown;
  path: Path;
}

function bodyMutations(r: RouteDef): Mutation[] {
  return bodyPlans(r).flatMap((plan, alt) =>
    plan.fields.flatMap((f) =>
      badValues(f.schema, plan.root).map((value) => ({
        label: `${alt ? `alternative ${alt}, ` : ""}body ${f.path.join(".")} = ${describeValue(value)}`,
        body: place(plan.base, f.path, value, plan.schemaAt, plan.root),
        path: f.path,
      })),
    ),
  );
}

const bodyCase = (r: RouteDef, label: string, body: unknown): Case => ({
  label,
  method: r.method.toUpperCase(),
  path: concretePath(r) + queryString(baseQuery(r)),
  body: Buffer.from(serialize(body)),
});

/** A mutation inside one entry of the route's `bodyItems` array: that entry, to be sent with others. */
function itemOf(r: RouteDef, m: Mutation): unknown | undefined {
  if (!r.bodyItems) return undefined;
  const items = (m.body as Record<string, unknown>)[r.bodyItems];
  const plan = bodyPlans(r)[0]!;
  const base = (plan.base as Record<string, unknown>)[r.bodyItems];
  if (!Array.isArray(items) || !Array.isArray(base) || items.length !== base.length) return undefined;
  // Only the first entry differs from the base when the mutation is inside an entry.
  const rest = (m.body as Record<string, unknown>) ?? {};
  const same = Object.keys(rest).every(
    (k) => k === r.bodyItems || serialize(rest[k]) === serialize((plan.base as Record<string, unknown>)[k]),
  );
  return same ? items[0] : undefined;
}

/**
 * Routes whose body carries items (sync records, events) judge each item on its own, so the mutated
 * items travel many to a request: a sync batch answers 200 and lists the rejected ones; an events
 * request is refused whole (400, each bad event named by index), and the events it did not name are
 * sent again so they reach the stores too. A 5xx is narrowed down to the items that cause it.
 */
async function sweepItems(r: RouteDef, entries: Mutation[]): Promise<string[]> {
  const plan = bodyPlans(r)[0]!;
  const key = r.bodyItems!;
  const itemsSchema = deref(deref(plan.root, plan.root).properties?.[key] ?? {}, plan.root);
  const max = Math.min(itemsSchema.maxItems ?? 100, 500);
  const failures: string[] = [];
  // Items are upserted by their ids: each gets ids of its own, or all but one would be "unchanged".
  let serial = 0;
  const distinct = (m: Mutation) => {
    const item = itemOf(r, m);
    if (item === null || typeof item !== "object" || Array.isArray(item)) return item;
    const n = serial++;
    return Object.fromEntries(
      Object.entries(item).map(([k, v]) =>
        typeof v === "string" && /^(id|.*Id)$/.test(k) && m.path[2] !== k ? [k, `${v}-${n}`] : [k, v],
      ),
    );
  };
  const run = async (batch: Mutation[]): Promise<void> => {
    const body = { ...(plan.base as Record<string, unknown>), [key]: batch.map(distinct) };
    const a = await send(bodyCase(r, "", body), r);
    const p = problem(a);
    if (p && batch.length > 1) {
      const half = Math.ceil(batch.length / 2);
      await run(batch.slice(0, half));
      await run(batch.slice(half));
      return;
    }
    if (p) {
      failures.push(`${r.method} ${r.path} — ${batch[0]!.label}: ${p}`);
      return;
    }
    if (a.status !== 400) return;
    const named = new Set(
      ((JSON.parse(a.text) as { error?: { details?: { index: number }[] } }).error?.details ?? []).map(
        (d) => d.index,
      ),
    );
    const others = batch.filter((_m, i) => !named.has(i));
    if (others.length && others.length < batch.length) await run(others);
  };
  const batches: Mutation[][] = [];
  for (let i = 0; i < entries.length; i += max) batches.push(entries.slice(i, i + max));
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < batches.length) await run(batches[next++]!);
    }),
  );
  return failures;
}

/** Bodies that are wrong as bytes: not UTF-8, compressed wrongly or in an unknown coding, too deep. */
function rawBodyCases(r: RouteDef): Case[] {
  const plan = bodyPlans(r)[0];
  if (!plan) return [];
  const json = Buffer.from(serialize(plan.base));
  const common = { method: r.method.toUpperCase(), path: concretePath(r) + queryString(baseQuery(r)) };
  const quote = json.indexOf(0x22);
  const notUtf8 =
    quote < 0
      ? Buffer.from([0xff])
      : Buffer.concat([json.subarray(0, quote + 1), Buffer.from([0xff, 0xfe]), json.subarray(quote + 1)]);
  return [
    { ...common, label: "body with bytes that are not UTF-8", body: notUtf8 },
    { ...common, label: "body that is a NUL byte", body: Buffer.from([0]) },
    { ...common, label: "gzip body", body: gzipSync(json), headers: { "content-encoding": "gzip" } },
    { ...common, label: "gzip header on a plain body", body: json, headers: { "content-encoding": "gzip" } },
    { ...common, label: "brotli body", body: json, headers: { "content-encoding": "br" } },
    { ...common, label: "body nested 65 deep", body: Buffer.from("[".repeat(65) + "]".repeat(65)) },
    { ...common, label: "text/plain body", body: json, headers: { "content-type": "text/plain" } },
  ];
}

describe("bad input to every route of the route table: never a 5xx, always JSON with a message", () => {
  it("the sweep reaches every route, and each route's base request passes validation", async () => {
    expect(routes.length).toBeGreaterThan(30);
    const refused: string[] = [];
    for (const r of routes) {
      const a = await send(baseCase(r), r);
      if (a.status >= 500 || a.status === 400)
        refused.push(`${r.method} ${r.path}: ${a.status} ${a.text.slice(0, 300)}`);
    }
    expect(refused).toEqual([]);
  });

  it("path parameters", async () => {
    const cases = routes.flatMap((route) => pathCases(route).map((c) => ({ route, c })));
    expect(cases.length).toBeGreaterThan(0);
    expect(await sweep(cases)).toEqual([]);
  });

  it("paths outside the route table (web pages, their assets, /docs, unknown paths)", async () => {
    const outside = { ...routes.find((r) => r.auth === "public")!, path: "(outside the table)" };
    const cases = ["/assets/", "/docs/assets/", "/docs/", "/console/", "/nowhere/"].flatMap((prefix) =>
      URL_TEXT.map((text) => ({
        route: outside,
        c: { label: `${prefix}${text}`, method: "GET", path: `${prefix}${text}` },
      })),
    );
    expect(await sweep(cases)).toEqual([]);
  });

  it("query parameters", async () => {
    const cases = routes.flatMap((route) => queryCases(route).map((c) => ({ route, c })));
    expect(cases.length).toBeGreaterThan(0);
    expect(await sweep(cases)).toEqual([]);
  });

  it("body fields", async () => {
    const single: { route: RouteDef; c: Case }[] = [];
    const failures: string[] = [];
    let count = 0;
    for (const route of routes) {
      const mutations = bodyMutations(route);
      count += mutations.length;
      const inItems = mutations.filter((m) => itemOf(route, m) !== undefined);
      for (const m of mutations)
        if (!inItems.includes(m)) single.push({ route, c: bodyCase(route, m.label, m.body) });
      if (inItems.length) failures.push(...(await sweepItems(route, inItems)));
    }
    expect(count).toBeGreaterThan(1000);
    failures.push(...(await sweep(single)));
    expect(failures).toEqual([]);
  });

  it("body bytes", async () => {
    const cases = routes.flatMap((route) => rawBodyCases(route).map((c) => ({ route, c })));
    expect(await sweep(cases)).toEqual([]);
  });
});
