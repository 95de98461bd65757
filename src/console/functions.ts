import {
  AGGREGATE_COMBINATORS,
  ALLOWED_FUNCTIONS,
  CASE_INSENSITIVE_NAMES,
  FUNCTION_ALIASES,
  REFUSED_FUNCTIONS,
} from "./function-list.js";

/**
 * A function name as the query wrote it, resolved the way the engine resolves it, against the
 * console's lists (`function-list.ts`): allowed, refused (with why), or on neither list.
 */
export type FunctionCheck =
  | { verdict: "allowed"; name: string; aggregate: boolean }
  | { verdict: "refused"; name: string; why: string }
  | { verdict: "unknown" };

interface Entry {
  name: string;
  aggregate: boolean;
  /** Set for a refused function. */
  why?: string;
}

const entries = new Map<string, Entry>();
for (const [group, names] of Object.entries(ALLOWED_FUNCTIONS)) {
  for (const name of names) entries.set(name, { name, aggregate: group === "aggregate" });
}
for (const { why, names } of Object.values(REFUSED_FUNCTIONS)) {
  for (const name of names) entries.set(name, { name, aggregate: false, why });
}

const caseInsensitive = new Set(CASE_INSENSITIVE_NAMES);
const aliases = new Map<string, string>();
const aliasesAnyCase = new Map<string, string>();
for (const pair of FUNCTION_ALIASES) {
  const [alias, target] = pair.split("=") as [string, string];
  aliases.set(alias, target);
  if (caseInsensitive.has(alias)) aliasesAnyCase.set(alias.toLowerCase(), target);
}
const entriesAnyCase = new Map<string, Entry>();
for (const entry of entries.values()) {
  if (caseInsensitive.has(entry.name)) entriesAnyCase.set(entry.name.toLowerCase(), entry);
}

/**
 * The entries `raw` can name. The engine's order: an alias (exact, then in any case for the
 * case-insensitive ones) becomes its target; the target is a function of that exact name, else a
 * case-insensitive one in any case; else, for aggregates, a combinator suffix is taken off and the
 * rest resolved again. The engine takes the first suffix that matches; every matching suffix is tried
 * here, so no reading of the name the engine could make is missed.
 */
function resolve(raw: string): Entry[] {
  const name = aliases.get(raw) ?? aliasesAnyCase.get(raw.toLowerCase()) ?? raw;
  const direct = entries.get(name) ?? entriesAnyCase.get(name.toLowerCase());
  if (direct) return [direct];
  const out: Entry[] = [];
  for (const suffix of AGGREGATE_COMBINATORS) {
    if (name.length <= suffix.length || !name.endsWith(suffix)) continue;
    for (const base of resolve(name.slice(0, -suffix.length))) {
      // A combinator makes an aggregate of an aggregate only; a refused base refuses whatever it is.
      if (base.aggregate || base.why) out.push(base);
    }
  }
  return out;
}

/** Refused when any reading of the name is a refused function; allowed when one is an allowed one. */
export function checkFunction(name: string): FunctionCheck {
  const found = resolve(name);
  const refused = found.find((e) => e.why !== undefined);
  if (refused) return { verdict: "refused", name: refused.name, why: refused.why! };
  const allowed = found[0];
  if (allowed) return { verdict: "allowed", name: allowed.name, aggregate: allowed.aggregate };
  return { verdict: "unknown" };
}

const allowedNames = [...entries.values()].filter((e) => !e.why).map((e) => e.name);

/** Allowed names within two edits of `name` (any case), closest first: a typo's likely meaning. */
export function similarFunctions(name: string, max = 3): string[] {
  const lower = name.toLowerCase();
  const scored: [number, string][] = [];
  for (const candidate of allowedNames) {
    if (Math.abs(candidate.length - lower.length) > 2) continue;
    const d = distance(lower, candidate.toLowerCase(), 2);
    if (d <= 2) scored.push([d, candidate]);
  }
  return scored
    .sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]))
    .slice(0, max)
    .map(([, n]) => n);
}

/** Levenshtein distance, given up (limit + 1) once every path exceeds `limit`. */
function distance(a: string, b: string, limit: number): number {
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + cost);
      row.push(value);
      best = Math.min(best, value);
    }
    if (best > limit) return limit + 1;
    previous = row;
  }
  return previous[b.length]!;
}
