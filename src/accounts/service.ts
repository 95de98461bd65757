import { ulid } from "ulid";
import { NotFoundError } from "../errors.js";
import type { SqlExecutor } from "../stores/sql/port.js";
import { type Account, DEFAULT_ORDER_SETTINGS, type OrderSettings, orderSettingsSchema } from "./schemas.js";

export const ACCOUNT_NOT_FOUND = "Account not found";

export class AccountService {
  constructor(private readonly sql: SqlExecutor) {}

  async create(input: { name: string; timezone?: string; currency?: string }): Promise<{ id: string }> {
    const id = ulid();
    await this.sql.query("INSERT INTO accounts (id, name, timezone, currency) VALUES ($1, $2, $3, $4)", [
      id,
      input.name,
      input.timezone ?? "UTC",
      input.currency ?? "USD",
    ]);
    return { id };
  }

  async exists(accountId: string): Promise<boolean> {
    const { rows } = await this.sql.query("SELECT 1 FROM accounts WHERE id = $1", [accountId]);
    return rows.length > 0;
  }

  /** The public projection of interface §2.8: active owners and admins only, no internal field. */
  async get(accountId: string): Promise<Account> {
    const { rows } = await this.sql.query<{
      name: string;
      created_at: Date;
      subscription: Account["subscription"];
    }>("SELECT name, created_at, subscription FROM accounts WHERE id = $1", [accountId]);
    const account = rows[0];
    if (!account) throw new NotFoundError(ACCOUNT_NOT_FOUND);
    const { rows: people } = await this.sql.query<{
      role: string;
      email: string;
      first_name: string;
      last_name: string;
    }>(
      `SELECT m.role, u.email, u.first_name, u.last_name FROM account_members m JOIN users u ON u.id = m.user_id
       WHERE m.account_id = $1 AND m.active AND m.role IN ('owner', 'admin') ORDER BY m.created_at, u.email`,
      [accountId],
    );
    const person = (p: (typeof people)[number]) => ({
      email: p.email,
      firstName: p.first_name,
      lastName: p.last_name,
    });
    return {
      accountName: account.name,
      createdAt: account.created_at.toISOString(),
      owners: people.filter((p) => p.role === "owner").map(person),
      admins: people.filter((p) => p.role === "admin").map(person),
      ...(account.subscription ? { subscription: account.subscription } : {}),
    };
  }

  /** Stored settings with the §2.9 defaults filled in, so the answer is always complete. */
  async orderSettings(accountId: string): Promise<OrderSettings> {
    const { rows } = await this.sql.query<{ order_settings: Partial<OrderSettings> | null }>(
      "SELECT order_settings FROM accounts WHERE id = $1",
      [accountId],
    );
    const row = rows[0];
    if (!row) throw new NotFoundError(ACCOUNT_NOT_FOUND);
    // Only known, well-typed stored keys override a default: a stray or null value never leaks out.
    const stored = orderSettingsSchema.partial().safeParse(row.order_settings ?? {});
    const valid = stored.success ? stored.data : {};
    const defined = Object.fromEntries(Object.entries(valid).filter(([, v]) => v !== undefined));
    return { ...DEFAULT_ORDER_SETTINGS, ...defined };
  }
}
