import { createHmac, randomInt, timingSafeEqual } from "node:crypto";
import { crc32 } from "node:zlib";

/**
 * Raw key: `pxh_` + public id (12) + secret (28) + checksum (6), all base62.
 * The secret carries 28 × log2(62) ≈ 166.7 random bits; the public id is the store lookup key; the
 * CRC-32 checksum lets a typo or a truncated paste be refused without touching a store.
 */
export const KEY_PREFIX = "pxh_";
const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const PUBLIC_LEN = 12;
const SECRET_LEN = 28;
const CHECK_LEN = 6;
const BODY_LEN = PUBLIC_LEN + SECRET_LEN;
const KEY_RE = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${BODY_LEN + CHECK_LEN}}$`);

function randomBase62(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(62)];
  return out;
}

function base62Fixed(n: number, width: number): string {
  let out = "";
  let v = n;
  for (let i = 0; i < width; i++) {
    out = ALPHABET[v % 62] + out;
    v = Math.floor(v / 62);
  }
  return out;
}

function checksum(body: string): string {
  return base62Fixed(crc32(KEY_PREFIX + body), CHECK_LEN);
}

export interface GeneratedKey {
  raw: string;
  publicId: string;
}

export function generateKey(): GeneratedKey {
  const publicId = randomBase62(PUBLIC_LEN);
  const body = publicId + randomBase62(SECRET_LEN);
  return { raw: KEY_PREFIX + body + checksum(body), publicId };
}

/** The public id of a well-formed key, or null for anything malformed (wrong prefix, length, checksum). */
export function parseKey(raw: string): { publicId: string } | null {
  if (!KEY_RE.test(raw)) return null;
  const body = raw.slice(KEY_PREFIX.length, KEY_PREFIX.length + BODY_LEN);
  if (raw.slice(KEY_PREFIX.length + BODY_LEN) !== checksum(body)) return null;
  return { publicId: body.slice(0, PUBLIC_LEN) };
}

/** A short, safe-to-show form for listings and logs. */
export function displayPrefix(publicId: string): string {
  return `${KEY_PREFIX}${publicId}…`;
}

export function hashKey(secret: string, raw: string): Buffer {
  return createHmac("sha256", secret).update(raw).digest();
}

export function hashesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
