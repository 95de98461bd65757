import type { OrderSettings } from "../../accounts/schemas.js";
import type { AttributionModel } from "../attribution-models.js";
import type { Binder } from "../binder.js";
import type { Family } from "../filters/fields.js";
import type { Filter } from "../filters/schema.js";
import type { SourceName } from "../measures.js";
import type { Granularity, Instants } from "../time.js";

/** What every source emitter reads: the normalized query plus the binder of its statement. */
export interface EmitContext {
  binder: Binder;
  pixelId: string;
  timezone: string;
  currency: string;
  granularity: Granularity;
  range: Instants;
  /**
   * Fact sources only: the compare period, answered by the same statement. Its rows then carry
   * `period`: 0 for `range`, 1 for this one (the two never overlap).
   */
  compareRange?: Instants;
  filter?: Filter | undefined;
  orderSettings: OrderSettings;
  /** Dimension fields (catalog names), in request order. */
  dimensions: readonly string[];
  attribution: AttributionChoice;
  /** Set when the caller asked for customer-order numbering (customers.* fields or measures). */
  needsCustomerNumbering: boolean;
}

/** The model and window attribution credits by; `halfLifeDays` weighs time_decay. */
export interface AttributionChoice {
  model: AttributionModel;
  window: number;
  halfLifeDays: number;
}

/** Families of fields each source can evaluate (filters and dimensions alike). */
export const SOURCE_FAMILIES: Record<SourceName, readonly Family[]> = {
  orders: ["orders", "customers"],
  refunds: ["orders", "customers"],
  order_costs: ["orders", "customers"],
  ads: ["channel"],
  events: ["events"],
  attribution: ["orders", "customers", "attribution"],
};

/** One statement of a compiled query: its SQL, bound values, and which columns hold what. */
export interface SourceStatement {
  source: SourceName;
  sql: string;
  params: Record<string, unknown>;
  /** Base aggregate names selected (columns of the same name). */
  bases: string[];
}
