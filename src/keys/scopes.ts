/** Scopes of the public API (docs/authentication.md), plus `sync:write` for connectors pushing store and ad data. */
export const SCOPES = [
  "analytics:read",
  "dashboards:read",
  "dashboards:write",
  "events:write",
  "costs:read",
  "costs:write",
  "account:read",
  "account:write",
  "sync:write",
] as const;
export type Scope = (typeof SCOPES)[number];

/** Names on keys minted before May 2026; accepted and expanded at request time. */
export const LEGACY_SCOPES = { db_query: ["analytics:read"], attribution_query: ["analytics:read"] } as const;
export type LegacyScope = keyof typeof LEGACY_SCOPES;

export const STORABLE_SCOPES: readonly string[] = [...SCOPES, ...Object.keys(LEGACY_SCOPES)];

const IMPLIED: Partial<Record<Scope, Scope[]>> = { "dashboards:write": ["dashboards:read"] };

/** The effective scopes of a key: legacy names expanded, implications added. */
export function effectiveScopes(stored: readonly string[]): Set<Scope> {
  const out = new Set<Scope>();
  const add = (s: Scope) => {
    out.add(s);
    for (const implied of IMPLIED[s] ?? []) out.add(implied);
  };
  for (const s of stored) {
    if (s in LEGACY_SCOPES) for (const x of LEGACY_SCOPES[s as LegacyScope]) add(x);
    else if ((SCOPES as readonly string[]).includes(s)) add(s as Scope);
  }
  return out;
}
