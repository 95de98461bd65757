import { LRUCache } from "lru-cache";
import { ulid } from "ulid";
import { AccessDeniedError, NotFoundError, UnauthorizedError } from "../errors.js";
import { RefreshingCache } from "../shared/refreshing-cache.js";
import type { SqlStore } from "../stores/sql/port.js";
import { displayPrefix, generateKey, hashesEqual, hashKey, parseKey } from "./format.js";
import { effectiveScopes, type Scope } from "./scopes.js";

export interface ApiKeyRecord {
  id: string;
  pixelId: string;
  name: string;
  prefix: string;
  scopes: string[];
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

interface KeyRow {
  id: string;
  pixel_id: string;
  name: string;
  public_id: string;
  key_hash: Uint8Array;
  scopes: string[];
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
  pixel_status: string;
}

/** A key row as authentication reads it: with its pixel's status and account. */
type StoredKey = KeyRow & { account_id: string };

/** What a request learns about the key that authenticated it. */
export interface Principal {
  keyId: string;
  pixelId: string;
  accountId: string;
  scopes: Set<Scope>;
}

/** Who made a change, as outbox events record it: `cli:<apiKeyPk>` for a write made with an API key. */
export const actorOf = (p: Pick<Principal, "keyId">) => `cli:${p.keyId}`;

const toRecord = (r: Omit<KeyRow, "key_hash" | "pixel_status">): ApiKeyRecord => ({
  id: r.id,
  pixelId: r.pixel_id,
  name: r.name,
  prefix: displayPrefix(r.public_id),
  scopes: r.scopes,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
  lastUsedAt: r.last_used_at,
});

const LAST_USED_EVERY_MS = 60_000;

/** Store work done off the request path: writing `last_used_at`, re-reading a cached key. */
export type BackgroundTask = "last-used" | "key-refresh";

export class ApiKeyService {
  /**
   * Rows by public id (undefined for a well-formed id the store does not know, so guessing keys costs
   * no store query each time). A row is served at most `cacheMs` after its read began, which bounds
   * how late a revocation bites; busy keys are re-read in the background before that.
   */
  private readonly rows: RefreshingCache<StoredKey>;
  private readonly lastUsedWritten = new LRUCache<string, number>({ max: 10_000 });

  constructor(
    private readonly sql: SqlStore,
    private readonly secret: string,
    cacheMs: number,
    private readonly onBackgroundError: (err: unknown, task: BackgroundTask) => void = () => {},
  ) {
    this.rows = new RefreshingCache((publicId) => this.read(publicId), {
      ttlMs: cacheMs,
      max: 10_000,
      maxAbsent: 10_000,
      onRefreshError: (err) => onBackgroundError(err, "key-refresh"),
    });
  }

  async create(input: {
    pixelId: string;
    scopes: string[];
    name?: string;
    expiresAt?: Date | null;
  }): Promise<{ key: string; record: ApiKeyRecord }> {
    const { raw, publicId } = generateKey();
    const { rows } = await this.sql.query<KeyRow>(
      `INSERT INTO api_keys (id, pixel_id, name, public_id, key_hash, scopes, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       RETURNING id, pixel_id, name, public_id, scopes, created_at, expires_at, revoked_at, last_used_at`,
      [
        ulid(),
        input.pixelId,
        input.name ?? "",
        publicId,
        hashKey(this.secret, raw),
        input.scopes,
        input.expiresAt ?? null,
      ],
    );
    return { key: raw, record: toRecord(rows[0]!) };
  }

  async list(pixelId: string): Promise<ApiKeyRecord[]> {
    const { rows } = await this.sql.query<KeyRow>(
      `SELECT id, pixel_id, name, public_id, scopes, created_at, expires_at, revoked_at, last_used_at
       FROM api_keys WHERE pixel_id = $1 ORDER BY created_at, id`,
      [pixelId],
    );
    return rows.map(toRecord);
  }

  async revoke(keyId: string): Promise<ApiKeyRecord> {
    const { rows } = await this.sql.query<KeyRow>(
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1
       RETURNING id, pixel_id, name, public_id, scopes, created_at, expires_at, revoked_at, last_used_at`,
      [keyId],
    );
    const row = rows[0];
    if (!row) throw new NotFoundError(`API key ${keyId} not found`);
    this.rows.invalidate(row.public_id);
    return toRecord(row);
  }

  /**
   * Authenticates headers: malformed → 401 before any store is touched; unknown, wrong secret,
   * revoked, expired, another pixel's key or an inactive pixel → 403 (one body for all of them).
   */
  async authenticate(rawKey: string | undefined, pixelId: string | undefined): Promise<Principal> {
    if (!rawKey || !pixelId || !isWellFormedPixelId(pixelId)) throw new UnauthorizedError();
    const parsed = parseKey(rawKey);
    if (!parsed) throw new UnauthorizedError();
    const row = await this.rows.get(parsed.publicId);
    if (!row) throw new AccessDeniedError("unknown key");
    if (!hashesEqual(row.key_hash, hashKey(this.secret, rawKey)))
      throw new AccessDeniedError("secret mismatch");
    const now = Date.now();
    if (row.revoked_at) throw new AccessDeniedError("revoked");
    if (row.expires_at && row.expires_at.getTime() <= now) throw new AccessDeniedError("expired");
    if (row.pixel_id !== pixelId) throw new AccessDeniedError("key of another pixel");
    if (row.pixel_status !== "active") throw new AccessDeniedError("inactive pixel");
    this.touch(row.id, now);
    return {
      keyId: row.id,
      pixelId: row.pixel_id,
      accountId: row.account_id,
      scopes: effectiveScopes(row.scopes),
    };
  }

  private async read(publicId: string): Promise<StoredKey | undefined> {
    const { rows } = await this.sql.query<StoredKey>(
      `SELECT k.id, k.pixel_id, k.name, k.public_id, k.key_hash, k.scopes, k.created_at, k.expires_at,
              k.revoked_at, k.last_used_at, p.status AS pixel_status, p.account_id
       FROM api_keys k JOIN pixels p ON p.id = k.pixel_id WHERE k.public_id = $1`,
      [publicId],
    );
    return rows[0];
  }

  /** `last_used_at` is written at most once a minute per key, off the request path. */
  private touch(keyId: string, now: number) {
    const last = this.lastUsedWritten.get(keyId) ?? 0;
    if (now - last < LAST_USED_EVERY_MS) return;
    this.lastUsedWritten.set(keyId, now);
    this.sql.query("UPDATE api_keys SET last_used_at = now() WHERE id = $1", [keyId]).catch((err) => {
      try {
        this.onBackgroundError(err, "last-used");
      } catch {
        // A failing report must not become an unhandled rejection.
      }
    });
  }
}

/** Pixel ids: 1–64 of letters, digits, `_` and `-`. */
export const PIXEL_ID_RE = /^[A-Za-z0-9_-]{1,64}$/;
export const isWellFormedPixelId = (v: string) => PIXEL_ID_RE.test(v);
