/**
 * IP handling before storage: the warehouse keeps only a network prefix (privacy by default),
 * forwarders get the original. Addresses are validated with node:net; masking is done on bytes.
 */
import { isIP } from "node:net";

export interface TruncateOptions {
  v4PrefixBits: number;
  v6PrefixBits: number;
}

export const DEFAULT_TRUNCATE: Readonly<TruncateOptions> = Object.freeze({
  v4PrefixBits: 24,
  v6PrefixBits: 48,
});

/** Strips what is not part of the address itself: brackets (`[::1]`) and an IPv6 zone (`%eth0`). */
function bare(ip: string): string {
  let s = ip.trim();
  if (s.startsWith("[") && s.endsWith("]")) s = s.slice(1, -1);
  const zone = s.indexOf("%");
  return zone >= 0 && s.includes(":") ? s.slice(0, zone) : s;
}

function v4Bytes(ip: string): number[] {
  return ip.split(".").map(Number);
}

/** 16 bytes of a valid IPv6 address (already checked by isIP), including a dotted-quad tail. */
function v6Bytes(ip: string): number[] {
  let text = ip.toLowerCase();
  let tail: number[] = [];
  const dotted = text.lastIndexOf(":");
  if (text.includes(".")) {
    tail = v4Bytes(text.slice(dotted + 1));
    text = `${text.slice(0, dotted + 1)}0:0`;
  }
  const [head = "", rest] = text.split("::");
  const left = head ? head.split(":") : [];
  const right = rest ? rest.split(":") : [];
  const fill = rest === undefined ? [] : Array<string>(8 - left.length - right.length).fill("0");
  const groups = [...left, ...fill, ...right].map((g) => Number.parseInt(g, 16));
  const bytes = groups.flatMap((g) => [g >> 8, g & 0xff]);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

/** `::ffff:a.b.c.d` (in any spelling) is an IPv4 client seen through a dual-stack socket. */
function mappedV4(bytes: readonly number[]): number[] | null {
  const prefix = bytes.slice(0, 12);
  const isMapped = prefix.slice(0, 10).every((b) => b === 0) && prefix[10] === 0xff && prefix[11] === 0xff;
  return isMapped ? bytes.slice(12) : null;
}

function mask(bytes: readonly number[], bits: number): number[] {
  const keep = Math.min(Math.max(Math.trunc(Number.isFinite(bits) ? bits : 0), 0), bytes.length * 8);
  return bytes.map((b, i) => {
    const left = keep - i * 8;
    if (left >= 8) return b;
    if (left <= 0) return 0;
    return b & ((0xff << (8 - left)) & 0xff);
  });
}

/** RFC 5952 text: lower-case hex, no leading zeros, the longest run (≥ 2) of zero groups as `::`. */
function formatV6(bytes: readonly number[]): string {
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((bytes[i] ?? 0) << 8) | (bytes[i + 1] ?? 0));
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLen).join(":")}`;
}

export function truncateIp(ip: string | undefined, opts: TruncateOptions = DEFAULT_TRUNCATE): string {
  const addr = bare(ip ?? "");
  const version = isIP(addr);
  if (version === 4) return mask(v4Bytes(addr), opts.v4PrefixBits).join(".");
  if (version !== 6) return "";
  const bytes = v6Bytes(addr);
  const v4 = mappedV4(bytes);
  if (v4) return mask(v4, opts.v4PrefixBits).join(".");
  return formatV6(mask(bytes, opts.v6PrefixBits));
}

/** A valid address in the form we store ('' when invalid); IPv4-mapped IPv6 becomes plain IPv4. */
export function normalizeIp(ip: string | undefined): string {
  return truncateIp(ip, { v4PrefixBits: 32, v6PrefixBits: 128 });
}

/** One X-Forwarded-For entry; some proxies append a port (`203.0.113.7:5123`, `[2001:db8::1]:443`). */
function forwardedEntry(entry: string): string {
  const s = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(s);
  if (bracketed) return bracketed[1] ?? "";
  const v4WithPort = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(s);
  return v4WithPort ? (v4WithPort[1] ?? "") : s;
}

/**
 * The browser's address. Behind one trusted proxy the right-most valid X-Forwarded-For entry is the
 * address that proxy saw; everything left of it was sent by the client and may be forged. Without
 * trust the header is ignored altogether.
 */
export function clientIpFromRequest(
  remoteAddress: string | undefined,
  forwardedFor: string | undefined,
  trustProxy: boolean,
): string {
  if (trustProxy && forwardedFor) {
    const entries = forwardedFor.split(",");
    for (let i = entries.length - 1; i >= 0; i--) {
      const ip = normalizeIp(forwardedEntry(entries[i]!));
      if (ip) return ip;
    }
  }
  return normalizeIp(remoteAddress);
}
