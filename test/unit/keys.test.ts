import { createHmac } from "node:crypto";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AccessDeniedError, UnauthorizedError } from "../../src/errors.js";
import {
  displayPrefix,
  generateKey,
  hashesEqual,
  hashKey,
  KEY_PREFIX,
  parseKey,
} from "../../src/keys/format.js";
import { ApiKeyService } from "../../src/keys/service.js";
import { PixelService } from "../../src/pixels/service.js";
import { readMigrations, SQL_DIR } from "../../src/stores/migrations.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import { openPglite } from "../helpers/stores.js";

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const FORMAT = /^pxh_[0-9A-Za-z]{46}$/;

describe("generateKey", () => {
  it("is pxh_ followed by 46 base62 characters, the first 12 being the public id", () => {
    for (let i = 0; i < 50; i++) {
      const { raw, publicId } = generateKey();
      expect(raw).toMatch(FORMAT);
      expect(raw.length).toBe(50);
      expect(KEY_PREFIX).toBe("pxh_");
      expect(publicId).toMatch(/^[0-9A-Za-z]{12}$/);
      expect(raw.slice(4, 16)).toBe(publicId);
    }
  });

  it("gives unique keys and public ids over 1000 generations", () => {
    const keys = Array.from({ length: 1000 }, () => generateKey());
    expect(new Set(keys.map((k) => k.raw)).size).toBe(1000);
    expect(new Set(keys.map((k) => k.publicId)).size).toBe(1000);
  });

  it("uses the whole base62 alphabet (the secret is not hex or lower-case only)", () => {
    const seen = new Set(
      Array.from({ length: 200 }, () => generateKey().raw.slice(4))
        .join("")
        .split(""),
    );
    expect(seen.size).toBe(62);
  });

  it("displayPrefix shows the public id only", () => {
    const { raw, publicId } = generateKey();
    const shown = displayPrefix(publicId);
    expect(shown).toBe(`pxh_${publicId}…`);
    expect(raw.startsWith(shown.slice(0, -1))).toBe(true);
    expect(shown.length).toBeLessThan(raw.length);
  });
});

describe("parseKey", () => {
  it("accepts generated keys and returns their public id", () => {
    for (let i = 0; i < 200; i++) {
      const { raw, publicId } = generateKey();
      expect(parseKey(raw)).toStrictEqual({ publicId });
    }
  });

  it("rejects every single-character corruption of the body (checksum)", () => {
    const { raw } = generateKey();
    let tried = 0;
    for (let pos = KEY_PREFIX.length; pos < raw.length; pos++) {
      for (const c of ALPHABET) {
        if (c === raw[pos]) continue;
        const corrupted = raw.slice(0, pos) + c + raw.slice(pos + 1);
        expect({ corrupted, parsed: parseKey(corrupted) }).toStrictEqual({ corrupted, parsed: null });
        tried++;
      }
    }
    expect(tried).toBe(46 * 61);
  });

  it("rejects adjacent transpositions", () => {
    const { raw } = generateKey();
    for (let pos = KEY_PREFIX.length; pos < raw.length - 1; pos++) {
      if (raw[pos] === raw[pos + 1]) continue;
      const swapped = raw.slice(0, pos) + raw[pos + 1] + raw[pos] + raw.slice(pos + 2);
      expect(parseKey(swapped)).toBeNull();
    }
  });

  it.each([
    ["pxk_", "another prefix"],
    ["PXH_", "upper-case prefix"],
    ["pxh-", "dash instead of underscore"],
    ["px_", "short prefix"],
    ["", "no prefix"],
    ["sk_", "someone else's prefix"],
  ])("rejects prefix %j (%s)", (prefix) => {
    const { raw } = generateKey();
    expect(parseKey(prefix + raw.slice(KEY_PREFIX.length))).toBeNull();
  });

  it("rejects the wrong length", () => {
    const { raw } = generateKey();
    expect(parseKey(raw.slice(0, -1))).toBeNull();
    expect(parseKey(`${raw}0`)).toBeNull();
    expect(parseKey(raw.slice(0, 20))).toBeNull();
    expect(parseKey(raw + raw.slice(4))).toBeNull();
    expect(parseKey("")).toBeNull();
    expect(parseKey("pxh_")).toBeNull();
  });

  it("rejects characters outside base62 and surrounding whitespace", () => {
    const { raw } = generateKey();
    expect(parseKey(`${raw.slice(0, 20)}_${raw.slice(21)}`)).toBeNull();
    expect(parseKey(`${raw.slice(0, 20)}é${raw.slice(21)}`)).toBeNull();
    expect(parseKey(` ${raw}`)).toBeNull();
    expect(parseKey(`${raw}\n`)).toBeNull();
  });
});

describe("hashKey", () => {
  it("is HMAC-SHA-256 of the raw key under the secret", () => {
    const secret = "s".repeat(40);
    const { raw } = generateKey();
    const expected = createHmac("sha256", secret).update(raw).digest();
    const got = hashKey(secret, raw);
    expect(got.length).toBe(32);
    expect(Buffer.compare(got, expected)).toBe(0);
  });

  it("depends on the secret and on every character of the key", () => {
    const { raw } = generateKey();
    expect(hashesEqual(hashKey("a".repeat(32), raw), hashKey("b".repeat(32), raw))).toBe(false);
    expect(hashesEqual(hashKey("a".repeat(32), raw), hashKey("a".repeat(32), raw))).toBe(true);
    const other = raw.slice(0, -1) + (raw.endsWith("a") ? "b" : "a");
    expect(hashesEqual(hashKey("a".repeat(32), raw), hashKey("a".repeat(32), other))).toBe(false);
  });

  it("hashesEqual refuses different lengths instead of throwing", () => {
    expect(hashesEqual(new Uint8Array(32), new Uint8Array(31))).toBe(false);
    expect(hashesEqual(new Uint8Array([1, 2]), new Uint8Array([1, 2]))).toBe(true);
  });
});

/** The real store, with every query passed through `around` first (to count or hold it). */
function watch(
  store: SqlStore,
  around: (text: string, run: () => Promise<unknown>) => Promise<unknown>,
): SqlStore {
  return Object.assign(Object.create(store) as SqlStore, {
    query: ((text: string, params?: readonly unknown[]) =>
      around(text, () => store.query(text, params as never))) as SqlStore["query"],
  });
}

describe("ApiKeyService over PGlite", () => {
  const SECRET = "unit-test-secret-unit-test-secret-0123456789";
  let store: SqlStore;
  let close: () => Promise<void>;
  let keys: ApiKeyService;
  let pixelId: string;

  beforeAll(async () => {
    const opened = await openPglite();
    store = opened.store;
    close = opened.close;
    for (const m of readMigrations(join(SQL_DIR, "postgres"))) await store.exec(m.sql);
    keys = new ApiKeyService(store, SECRET, 0);
    pixelId = (await new PixelService(store).create({ name: "Unit Shop" })).pixel.id;
  });
  afterAll(() => close?.());

  it("stores only the keyed hash: no column holds the raw key or its secret part", async () => {
    const { key, record } = await keys.create({ pixelId, scopes: ["account:read"], name: "ci" });
    expect(key).toMatch(FORMAT);
    const { rows } = await store.query<Record<string, unknown>>("SELECT * FROM api_keys WHERE id = $1", [
      record.id,
    ]);
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    const secretPart = key.slice(16, 44);
    for (const [column, value] of Object.entries(row)) {
      const text =
        value instanceof Uint8Array
          ? `${Buffer.from(value).toString("hex")} ${Buffer.from(value).toString("latin1")}`
          : JSON.stringify(value);
      expect({ column, hasKey: text.includes(key), hasSecret: text.includes(secretPart) }).toStrictEqual({
        column,
        hasKey: false,
        hasSecret: false,
      });
    }
    expect(row.public_id).toBe(key.slice(4, 16));
    const expected = createHmac("sha256", SECRET).update(key).digest();
    expect(Buffer.compare(Buffer.from(row.key_hash as Uint8Array), expected)).toBe(0);
    // Nor does anything the service hands back after creation.
    const listed = await keys.list(pixelId);
    expect(JSON.stringify(listed)).not.toContain(secretPart);
    expect(listed.find((k) => k.id === record.id)?.prefix).toBe(`pxh_${key.slice(4, 16)}…`);
  });

  it("authenticates the raw key and refuses one signed with another secret", async () => {
    const { key, record } = await keys.create({ pixelId, scopes: ["account:read", "db_query"] });
    const principal = await keys.authenticate(key, pixelId);
    expect(principal.keyId).toBe(record.id);
    expect(principal.pixelId).toBe(pixelId);
    expect([...principal.scopes].sort()).toStrictEqual(["account:read", "analytics:read"]);
    const elsewhere = new ApiKeyService(store, `${SECRET}-other`, 0);
    await expect(elsewhere.authenticate(key, pixelId)).rejects.toBeInstanceOf(AccessDeniedError);
  });

  it("with a cache, concurrent requests of one key read it once, and a revocation here bites at once", async () => {
    let reads = 0;
    const watched = watch(store, (text, run) => {
      if (text.includes("FROM api_keys k JOIN pixels")) reads++;
      return run();
    });
    const cached = new ApiKeyService(watched, SECRET, 5000);
    const { key, record } = await cached.create({ pixelId, scopes: ["account:read"] });
    const principals = await Promise.all(Array.from({ length: 20 }, () => cached.authenticate(key, pixelId)));
    expect(principals.map((p) => p.keyId)).toStrictEqual(Array(20).fill(record.id));
    expect(reads).toBe(1);
    await cached.authenticate(key, pixelId);
    expect(reads).toBe(1);
    await cached.revoke(record.id);
    await expect(cached.authenticate(key, pixelId)).rejects.toBeInstanceOf(AccessDeniedError);
    expect(reads).toBe(2);
  });

  it("a revocation here bites at once even while a read of the key is under way", async () => {
    let reads = 0;
    let release: () => void = () => {};
    let gate: Promise<void> = Promise.resolve();
    const watched = watch(store, async (text, run) => {
      if (!text.includes("FROM api_keys k JOIN pixels")) return run();
      reads++;
      // The row is read now (before the revocation), and answered when the test lets it.
      const result = await run();
      await gate;
      return result;
    });
    const cached = new ApiKeyService(watched, SECRET, 5000);
    const { key, record } = await cached.create({ pixelId, scopes: ["account:read"] });
    gate = new Promise((resolve) => {
      release = resolve;
    });
    const during = cached.authenticate(key, pixelId);
    while (reads === 0) await new Promise((resolve) => setImmediate(resolve));
    await cached.revoke(record.id);
    release();
    // The call that began before the revocation may still pass; every later one is refused.
    expect((await during).keyId).toBe(record.id);
    await expect(cached.authenticate(key, pixelId)).rejects.toBeInstanceOf(AccessDeniedError);
    expect(reads).toBe(2);
  });

  it("malformed input is refused with 401 before the store is touched", async () => {
    // The real store, watched: every query still reaches PGlite, and is counted.
    let queries = 0;
    const watched = watch(store, (_text, run) => {
      queries++;
      return run();
    });
    const service = new ApiKeyService(watched, SECRET, 0);
    const { key } = await keys.create({ pixelId, scopes: ["account:read"] });
    const bad = key.slice(0, -1) + (key.endsWith("a") ? "b" : "a");
    for (const [k, p] of [
      [bad, pixelId],
      [`pxk_${key.slice(4)}`, pixelId],
      [key.slice(0, -1), pixelId],
      [undefined, pixelId],
      ["", pixelId],
      [key, undefined],
      [key, "a b"],
      [key, "x".repeat(65)],
    ] as const) {
      await expect(service.authenticate(k, p)).rejects.toBeInstanceOf(UnauthorizedError);
    }
    expect(queries).toBe(0);
    // A well-formed key does reach the store.
    await expect(service.authenticate(generateKey().raw, pixelId)).rejects.toBeInstanceOf(AccessDeniedError);
    expect(queries).toBeGreaterThan(0);
  });
});
