import type { RequestHandler } from "express";
import { match } from "path-to-regexp";
import { BadRequestError, type FieldIssue, ValidationError } from "../errors.js";
import type { RouteDef } from "./route.js";

/** decodeURIComponent, or null when the escapes do not spell UTF-8 (`%FF`, a cut `%E0%A4%A`, `%ED%A0%80`). */
function decodeOrNull(text: string): string | null {
  try {
    return decodeURIComponent(text);
  } catch {
    return null;
  }
}

const malformed = (name: string, raw: string): FieldIssue => ({
  message: `${name}: malformed percent-encoding (${JSON.stringify(raw)} does not decode to UTF-8 text)`,
  key: name,
  path: [name],
});

/**
 * Express decodes path parameters while it matches routes, and a malformed escape throws a URIError
 * there, which answered 500 (the web pages' `/assets/:file` too). This runs before any route and looks
 * at the path as sent: when a route of the table matches it (any method) and one of its parameters
 * does not decode, the answer is a 400 naming that parameter; any other path with a segment that does
 * not decode is a 400 quoting the segment. Paths without `%` pass untouched.
 */
export function decodablePath(routes: readonly RouteDef[]): RequestHandler {
  const matchers = routes.filter((r) => r.path.includes(":")).map((r) => match(r.path, { decode: false }));
  return (req, _res, next) => {
    if (!req.path.includes("%")) return next();
    for (const test of matchers) {
      const found = test(req.path);
      if (!found) continue;
      const issues = Object.entries(found.params).flatMap(([name, raw]) =>
        typeof raw === "string" && decodeOrNull(raw) === null ? [malformed(name, raw)] : [],
      );
      if (issues.length) return next(new ValidationError(issues));
    }
    const segment = req.path.split("/").find((s) => decodeOrNull(s) === null);
    if (segment === undefined) return next();
    next(
      new BadRequestError(
        `Malformed percent-encoding in the path: ${JSON.stringify(segment)} does not decode to UTF-8 text`,
      ),
    );
  };
}

/**
 * The query string parser (Express's "query parser" setting): `querystring.parse`'s shape — `+` is a
 * space, a repeated key gives an array, at most 1000 keys — except that an escape that does not decode
 * to UTF-8 is a 400 naming the parameter. querystring.parse put U+FFFD in its place, which silently
 * changed the value searched for or stored.
 */
export function parseQueryString(qs: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null);
  if (!qs) return out;
  const issues: FieldIssue[] = [];
  let keys = 0;
  for (const pair of qs.split("&")) {
    if (pair === "") continue;
    if (++keys > 1000) break;
    const eq = pair.indexOf("=");
    const rawKey = (eq < 0 ? pair : pair.slice(0, eq)).replaceAll("+", " ");
    const rawValue = (eq < 0 ? "" : pair.slice(eq + 1)).replaceAll("+", " ");
    const key = decodeOrNull(rawKey);
    const value = decodeOrNull(rawValue);
    if (key === null) {
      issues.push(malformed(rawKey, rawKey));
      continue;
    }
    if (value === null) {
      issues.push(malformed(key, rawValue));
      continue;
    }
    const prev = out[key];
    if (prev === undefined) out[key] = value;
    else if (Array.isArray(prev)) prev.push(value);
    else out[key] = [prev, value];
  }
  if (issues.length) throw new ValidationError(issues);
  return out;
}
