/**
 * Browser origins a pixel accepts events from. Entries are exact origins (`https://shop.example`) or
 * a wildcard subdomain (`https://*.shop.example`, which does not match the bare domain).
 */
export function originAllowed(origin: string, allowed: readonly string[]): boolean {
  let o: URL;
  try {
    o = new URL(origin);
  } catch {
    return false;
  }
  for (const entry of allowed) {
    const m = /^(https?):\/\/\*\.(.+)$/.exec(entry);
    if (m) {
      if (o.protocol === `${m[1]}:` && o.host.endsWith(`.${m[2]!.toLowerCase()}`)) return true;
    } else if (normalizeOrigin(entry) === o.origin) {
      return true;
    }
  }
  return false;
}

/** `https://Shop.Example/` → `https://shop.example`; null when it is not an http(s) origin. */
export function normalizeOrigin(value: string): string | null {
  const wildcard = /^(https?):\/\/\*\.([A-Za-z0-9.-]+(?::\d+)?)\/?$/.exec(value.trim());
  if (wildcard) return `${wildcard[1]}://*.${wildcard[2]!.toLowerCase()}`;
  try {
    const u = new URL(value.trim());
    if (u.protocol !== "http:" && u.protocol !== "https:") return null;
    if (u.pathname !== "/" || u.search || u.hash) return null;
    return u.origin;
  } catch {
    return null;
  }
}
