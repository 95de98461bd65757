import { ulid } from "ulid";
import { NotFoundError, ValidationError } from "../errors.js";
import { type AccountUpdatedEvent, PUBLIC_EVENTS_TOPIC } from "../events/public-events.js";
import { actorOf } from "../keys/service.js";
import type { SqlExecutor, SqlStore } from "../stores/sql/port.js";
import { accountNameProblem } from "./account-name.js";
import { type Account, DEFAULT_ORDER_SETTINGS, type OrderSettings, orderSettingsSchema } from "./schemas.js";

export const ACCOUNT_NOT_FOUND = "Account not found";

/** Who asks for a change: the key's pixel and account, and the key itself (the event's actor). */
export interface Actor {
  accountId: string;
  pixelId: string;
  keyId: string;
}

export class AccountService {
  constructor(
    /** The store, or an open transaction when another service creates an account inside its own. */
    private readonly sql: SqlStore | SqlExecutor,
    /** Called after a change that wrote to the outbox has committed (wakes the relay). */
    private readonly onOutbox: () => void = () => {},
  ) {}

  /**
   * Renames the account and writes its `accountUpdated` event to the outbox in the same
   * transaction, so there is never a rename without its event nor an event without its rename.
   * Renaming to the current name changes nothing and emits nothing. Answers the renamed account.
   */
  async rename(actor: Actor, accountName: string): Promise<Account> {
    // The route's schema already checked it; callers other than the route (CLI, tests) get the same rule.
    const problem = accountNameProblem(accountName);
    if (problem) {
      throw new ValidationError([
        { message: `accountName: ${problem}`, key: "accountName", path: ["accountName"] },
      ]);
    }
    const { account, emitted } = await this.transaction(async (tx) => {
      // The row lock orders concurrent renames, so each event's `from` is the name it replaced.
      const { rows } = await tx.query<{ name: string }>(
        "SELECT name FROM accounts WHERE id = $1 FOR UPDATE",
        [actor.accountId],
      );
      const current = rows[0];
      if (!current) throw new NotFoundError(ACCOUNT_NOT_FOUND);
      if (current.name === accountName)
        return { account: await this.project(tx, actor.accountId), emitted: false };
      const { rows: updated } = await tx.query<{ updated_at: Date }>(
        "UPDATE accounts SET name = $2, updated_at = clock_timestamp() WHERE id = $1 RETURNING updated_at",
        [actor.accountId, accountName],
      );
      const event: AccountUpdatedEvent = {
        type: "accountUpdated",
        accountId: actor.accountId,
        pixelId: actor.pixelId,
        actor: actorOf(actor),
        changes: { accountName: { from: current.name, to: accountName } },
        occurredAt: updated[0]!.updated_at.toISOString(),
      };
      await tx.query("INSERT INTO outbox (topic, payload) VALUES ($1, $2)", [PUBLIC_EVENTS_TOPIC, event]);
      return { account: await this.project(tx, actor.accountId), emitted: true };
    });
    if (emitted) this.onOutbox();
    return account;
  }

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

  /** A transaction of the store; an executor that is already a transaction is used as it is. */
  private transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    return "transaction" in this.sql ? this.sql.transaction(fn) : fn(this.sql);
  }

  /** The public projection of the account (docs/accounts.md): active owners and admins only, no internal field. */
  async get(accountId: string): Promise<Account> {
    return this.project(this.sql, accountId);
  }

  private async project(sql: SqlExecutor, accountId: string): Promise<Account> {
    const { rows } = await sql.query<{
      name: string;
      created_at: Date;
      subscription: Account["subscription"];
    }>("SELECT name, created_at, subscription FROM accounts WHERE id = $1", [accountId]);
    const account = rows[0];
    if (!account) throw new NotFoundError(ACCOUNT_NOT_FOUND);
    const { rows: people } = await sql.query<{
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

  /** Stored settings with the documented defaults filled in (docs/query.md, "Order settings"), so the answer is always complete. */
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
