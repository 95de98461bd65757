import { ulid } from "ulid";
import { AccountService } from "../accounts/service.js";
import { BadRequestError, ConflictError, NotFoundError } from "../errors.js";
import { isWellFormedPixelId } from "../keys/service.js";
import type { SqlStore } from "../stores/sql/port.js";
import { normalizeOrigin } from "./origins.js";

export interface PixelRecord {
  id: string;
  accountId: string;
  name: string;
  status: "active" | "inactive";
  allowedOrigins: string[];
  createdAt: Date;
}

interface PixelRow {
  id: string;
  account_id: string;
  name: string;
  status: "active" | "inactive";
  allowed_origins: string[];
  created_at: Date;
}

const toRecord = (r: PixelRow): PixelRecord => ({
  id: r.id,
  accountId: r.account_id,
  name: r.name,
  status: r.status,
  allowedOrigins: r.allowed_origins,
  createdAt: r.created_at,
});

export function isValidTimezone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

export class PixelService {
  constructor(private readonly sql: SqlStore) {}

  /** Creates the pixel, and its account too when no account id is given. */
  async create(input: {
    name: string;
    id?: string;
    accountId?: string;
    accountName?: string;
    timezone?: string;
    currency?: string;
  }): Promise<{ pixel: PixelRecord; accountCreated: boolean }> {
    const id = input.id ?? `px_${ulid().toLowerCase()}`;
    if (!isWellFormedPixelId(id)) throw new BadRequestError("pixel id must be 1-64 letters, digits, _ or -");
    if (input.timezone && !isValidTimezone(input.timezone)) {
      throw new BadRequestError(`timezone "${input.timezone}" is not an IANA timezone`);
    }
    if (input.currency && !/^[A-Z]{3}$/.test(input.currency)) {
      throw new BadRequestError(`currency "${input.currency}" is not an ISO 4217 code`);
    }
    if (input.accountId && (input.timezone || input.currency)) {
      throw new BadRequestError(
        "timezone and currency belong to the account: give them only when creating one",
      );
    }
    return this.sql.transaction(async (tx) => {
      const accounts = new AccountService(tx);
      let accountId = input.accountId;
      if (accountId) {
        if (!(await accounts.exists(accountId))) throw new NotFoundError(`account ${accountId} not found`);
      } else {
        accountId = (
          await accounts.create({
            name: input.accountName ?? input.name,
            ...(input.timezone ? { timezone: input.timezone } : {}),
            ...(input.currency ? { currency: input.currency } : {}),
          })
        ).id;
      }
      const { rows: existing } = await tx.query("SELECT 1 FROM pixels WHERE id = $1", [id]);
      if (existing.length) throw new ConflictError(`pixel ${id} already exists`);
      const { rows } = await tx.query<PixelRow>(
        "INSERT INTO pixels (id, account_id, name) VALUES ($1, $2, $3) RETURNING *",
        [id, accountId, input.name],
      );
      return { pixel: toRecord(rows[0]!), accountCreated: !input.accountId };
    });
  }

  async get(id: string): Promise<PixelRecord | null> {
    const { rows } = await this.sql.query<PixelRow>("SELECT * FROM pixels WHERE id = $1", [id]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async list(): Promise<PixelRecord[]> {
    const { rows } = await this.sql.query<PixelRow>("SELECT * FROM pixels ORDER BY created_at, id");
    return rows.map(toRecord);
  }

  /** Adds and removes browser origins the collector accepts for this pixel; returns the new list. */
  async updateOrigins(id: string, add: readonly string[], remove: readonly string[]): Promise<string[]> {
    const bad = [...add, ...remove].filter((o) => normalizeOrigin(o) === null);
    if (bad.length) {
      throw new BadRequestError(
        `not an origin (scheme://host[:port] or scheme://*.domain): ${bad.join(", ")}`,
      );
    }
    const norm = (xs: readonly string[]) => xs.map((o) => normalizeOrigin(o)!);
    const { rows } = await this.sql.query<{ allowed_origins: string[] }>(
      `UPDATE pixels SET allowed_origins = ARRAY(
         SELECT DISTINCT o FROM unnest(allowed_origins || $2::text[]) AS o WHERE o <> ALL($3::text[]) ORDER BY o),
         updated_at = now()
       WHERE id = $1 RETURNING allowed_origins`,
      [id, norm(add), norm(remove)],
    );
    if (!rows[0]) throw new NotFoundError(`pixel ${id} not found`);
    return rows[0].allowed_origins;
  }

  async count(): Promise<number> {
    const { rows } = await this.sql.query<{ n: number }>("SELECT count(*)::int AS n FROM pixels");
    return rows[0]?.n ?? 0;
  }

  async setStatus(id: string, status: "active" | "inactive"): Promise<void> {
    const r = await this.sql.query("UPDATE pixels SET status = $2, updated_at = now() WHERE id = $1", [
      id,
      status,
    ]);
    if (r.rowCount === 0) throw new NotFoundError(`pixel ${id} not found`);
  }
}
