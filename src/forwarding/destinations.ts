import { randomBytes } from "node:crypto";
import { LRUCache } from "lru-cache";
import { ulid } from "ulid";
import { z } from "zod";
import { BadRequestError, NotFoundError, ValidationError } from "../errors.js";
import { toFieldIssues } from "../shared/validate.js";
import { SqlError, type SqlStore } from "../stores/sql/port.js";

const httpUrl = z.url({ protocol: /^https?$/, error: "must be an http or https URL" });

export const webhookConfigSchema = z.strictObject({
  url: httpUrl,
  secret: z.string().min(16, "must be at least 16 characters").max(256),
});

export const DEFAULT_META_BASE_URL = "https://graph.facebook.com";
export const DEFAULT_META_API_VERSION = "v21.0";

export const metaCapiConfigSchema = z.strictObject({
  /** The Meta dataset (pixel) id: digits only, it is a path segment of the endpoint. */
  pixelId: z.string().regex(/^\d{1,32}$/, "must be the numeric Meta dataset id"),
  accessToken: z.string().min(1).max(1024),
  baseUrl: httpUrl.default(DEFAULT_META_BASE_URL),
  apiVersion: z
    .string()
    .regex(/^v\d{1,3}\.\d{1,3}$/, "must look like v21.0")
    .default(DEFAULT_META_API_VERSION),
  testEventCode: z.string().min(1).max(64).optional(),
});

export type WebhookConfig = z.output<typeof webhookConfigSchema>;
export type MetaCapiConfig = z.output<typeof metaCapiConfigSchema>;
export type DestinationKind = "webhook" | "meta_capi";

interface DestinationBase {
  id: string;
  pixelId: string;
  name: string;
  /** null = every event; otherwise only these event names are forwarded. */
  eventNames: string[] | null;
  enabled: boolean;
  createdAt: Date;
}

export type Destination =
  | (DestinationBase & { kind: "webhook"; config: WebhookConfig })
  | (DestinationBase & { kind: "meta_capi"; config: MetaCapiConfig });

export type AddDestinationInput = {
  pixelId: string;
  name?: string;
  eventNames?: string[] | null;
  enabled?: boolean;
} & (
  | { kind: "webhook"; config: { url: string; secret?: string } }
  | {
      kind: "meta_capi";
      config: {
        pixelId: string;
        accessToken: string;
        baseUrl?: string;
        apiVersion?: string;
        testEventCode?: string;
      };
    }
);

export interface DestinationRow {
  id: string;
  pixel_id: string;
  kind: string;
  name: string;
  config: unknown;
  event_names: string[] | null;
  enabled: boolean;
  created_at: Date;
}

const COLUMNS = "id, pixel_id, kind, name, config, event_names, enabled, created_at";

const eventNamesSchema = z
  .array(z.string().trim().min(1).max(128))
  .max(200)
  .nullable()
  .transform((names) => (names === null ? null : [...new Set(names)]));

/** 32 random bytes, base64url: the HMAC key of a webhook destination. */
export function generateWebhookSecret(): string {
  return randomBytes(32).toString("base64url");
}

/** Shows only the last 4 characters of a secret or token (nothing of a short one). */
export function mask(value: string): string {
  if (value.length <= 8) return "*".repeat(value.length || 4);
  return `${"*".repeat(Math.min(value.length - 4, 12))}${value.slice(-4)}`;
}

/** A destination with its secret / access token masked: what listings print. */
export function redactDestination(d: Destination): Destination {
  if (d.kind === "webhook") return { ...d, config: { ...d.config, secret: mask(d.config.secret) } };
  return { ...d, config: { ...d.config, accessToken: mask(d.config.accessToken) } };
}

function invalid(error: z.ZodError, prefix: string): ValidationError {
  const issues = toFieldIssues(error, [prefix]);
  return new ValidationError(issues, issues.map((i) => i.message).join("; "));
}

function parseConfig(kind: string, config: unknown): Destination["config"] {
  const schema = kind === "webhook" ? webhookConfigSchema : metaCapiConfigSchema;
  const r = schema.safeParse(config);
  if (!r.success) throw invalid(r.error, "config");
  return r.data;
}

/** A `destinations` row as a Destination; throws ValidationError when its config does not parse. */
export function destinationFromRow(r: DestinationRow): Destination {
  if (r.kind !== "webhook" && r.kind !== "meta_capi") {
    throw new BadRequestError(`destination ${r.id} has an unknown kind ${r.kind}`);
  }
  const base: DestinationBase = {
    id: r.id,
    pixelId: r.pixel_id,
    name: r.name,
    eventNames: r.event_names,
    enabled: r.enabled,
    createdAt: r.created_at,
  };
  return r.kind === "webhook"
    ? { ...base, kind: "webhook", config: parseConfig(r.kind, r.config) as WebhookConfig }
    : { ...base, kind: "meta_capi", config: parseConfig(r.kind, r.config) as MetaCapiConfig };
}

/**
 * Per-pixel forwarding destinations. `forPixel` is the ingestion hot path: its answer (also an
 * empty one) is cached in-process for `cacheMs` (≤ 5 s), so a change made by another process is
 * seen within that time; changes made through this instance are seen at once.
 */
export class DestinationService {
  private readonly cache: LRUCache<string, Destination[]>;
  private readonly loading = new Map<string, Promise<Destination[]>>();

  constructor(
    private readonly sql: SqlStore,
    private readonly options: { cacheMs?: number; onError?: (err: unknown) => void } = {},
  ) {
    const ttl = Math.min(5_000, Math.max(1, options.cacheMs ?? 5_000));
    this.cache = new LRUCache({ max: 10_000, ttl });
  }

  async add(input: AddDestinationInput): Promise<Destination> {
    const kind = input.kind;
    if (kind !== "webhook" && kind !== "meta_capi") {
      throw new BadRequestError(`kind must be webhook or meta_capi, not ${String(kind)}`);
    }
    const raw =
      input.kind === "webhook"
        ? { ...input.config, secret: input.config.secret ?? generateWebhookSecret() }
        : input.config;
    const config = parseConfig(kind, raw);
    const names = eventNamesSchema.safeParse(input.eventNames ?? null);
    if (!names.success) throw invalid(names.error, "eventNames");
    if (names.data && names.data.length === 0) {
      throw new BadRequestError("eventNames must list at least one event name (or be null for all)");
    }
    const name = (input.name ?? "").trim().slice(0, 200);
    try {
      const { rows } = await this.sql.query<DestinationRow>(
        `INSERT INTO destinations (id, pixel_id, kind, name, config, event_names, enabled)
         VALUES ($1, $2, $3, $4, $5::jsonb, $6, $7) RETURNING ${COLUMNS}`,
        [ulid(), input.pixelId, kind, name, JSON.stringify(config), names.data, input.enabled ?? true],
      );
      this.cache.delete(input.pixelId);
      return destinationFromRow(rows[0]!);
    } catch (err) {
      if (err instanceof SqlError && err.isForeignKeyViolation) {
        throw new NotFoundError(`pixel ${input.pixelId} not found`);
      }
      throw err;
    }
  }

  async get(id: string): Promise<Destination | undefined> {
    const { rows } = await this.sql.query<DestinationRow>(
      `SELECT ${COLUMNS} FROM destinations WHERE id = $1`,
      [id],
    );
    return rows[0] ? destinationFromRow(rows[0]) : undefined;
  }

  /** Every destination of the pixel, enabled or not, oldest first. */
  async list(pixelId: string): Promise<Destination[]> {
    const { rows } = await this.sql.query<DestinationRow>(
      `SELECT ${COLUMNS} FROM destinations WHERE pixel_id = $1 ORDER BY created_at, id`,
      [pixelId],
    );
    return rows.map(destinationFromRow);
  }

  /** Deletes the destination with its queued deliveries and dead letters. */
  async remove(id: string): Promise<Destination> {
    const { rows } = await this.sql.query<DestinationRow>(
      `DELETE FROM destinations WHERE id = $1 RETURNING ${COLUMNS}`,
      [id],
    );
    const row = rows[0];
    if (!row) throw new NotFoundError(`destination ${id} not found`);
    this.cache.delete(row.pixel_id);
    return destinationFromRow(row);
  }

  /** The pixel's enabled destinations, cached; a row whose config no longer parses is skipped. */
  async forPixel(pixelId: string): Promise<Destination[]> {
    const cached = this.cache.get(pixelId);
    if (cached) return cached;
    const pending = this.loading.get(pixelId);
    if (pending) return pending;
    const load = this.load(pixelId).finally(() => this.loading.delete(pixelId));
    this.loading.set(pixelId, load);
    return load;
  }

  /** Forgets cached answers (all pixels when no id is given). */
  invalidate(pixelId?: string): void {
    if (pixelId === undefined) this.cache.clear();
    else this.cache.delete(pixelId);
  }

  private async load(pixelId: string): Promise<Destination[]> {
    const { rows } = await this.sql.query<DestinationRow>(
      `SELECT ${COLUMNS} FROM destinations WHERE pixel_id = $1 AND enabled ORDER BY created_at, id`,
      [pixelId],
    );
    const out: Destination[] = [];
    for (const row of rows) {
      try {
        out.push(destinationFromRow(row));
      } catch (err) {
        this.options.onError?.(err);
      }
    }
    this.cache.set(pixelId, out);
    return out;
  }
}
