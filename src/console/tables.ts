/**
 * The analyst tables: the names the console exposes, what each reads, and how it is bound to one
 * pixel. Each is a CTE over the real table with the pixel as a bound parameter, deduplicated the way
 * the rest of the service reads it (the latest version of a versioned row), without `pixel_id`.
 */
export interface AnalystTable {
  name: string;
  /** The real warehouse table behind it. */
  real: string;
  description: string;
  /** fx_rates is global reference data: every pixel sees the same rates. */
  pixelScoped: boolean;
  /** One-line descriptions of the columns that need one. */
  columns: Readonly<Record<string, string>>;
  /** Storage columns analysts never see (besides pixel_id). */
  hidden?: readonly string[];
}

export const PIXEL_PARAM = "pxh_pixel";
export const LIMIT_PARAM = "pxh_limit";

export const ANALYST_TABLES: readonly AnalystTable[] = [
  {
    name: "events",
    real: "events",
    description: "Every accepted browser and server event, one row per event id (duplicates collapsed).",
    pixelScoped: true,
    columns: {
      event_id: "client eventId, or a server-generated ULID",
      name: "event name (page_view, purchase, …)",
      event_time: "when it happened, UTC",
      received_at: "when the service accepted it, UTC",
      origin: "browser or server",
      canonical_id: "visitor identity resolved through the identity graph at ingest",
      email_hashes: "sha256 of lower-cased trimmed emails; raw emails are never stored",
      ip: "truncated IP (IPv4 /24, IPv6 /48 by default)",
      channel: "classified channel: paid_social, organic_search, …",
      source: "normalized source: facebook, google, …",
      click_ids: "click identifiers by type: gclid, fbclid, ttclid, msclkid, …",
      is_touch: "carries campaign signals (counts as a marketing touch)",
      value: "event value in `currency` (purchases)",
      properties: "JSON text of every pass-through key",
    },
  },
  {
    name: "orders",
    real: "orders",
    description: "Store orders, the latest version of each order.",
    pixelScoped: true,
    columns: {
      total_price: "order total in `currency`",
      financial_status: "pending, authorized, paid, partially_paid, partially_refunded, refunded or voided",
      canonical_id: "buyer identity at sync time",
      version: "source updatedAt in milliseconds; the highest wins",
    },
    // FINAL already drops the tombstones an order leaves in its old creation month; ingested_at is
    // bookkeeping of the derived tables (docs/derived-tables.md).
    hidden: ["is_deleted", "ingested_at"],
  },
  {
    name: "order_lines",
    real: "order_lines",
    description: "Lines of each order's latest version.",
    pixelScoped: true,
    columns: {
      price: "unit price in the order's currency",
      version: "the order version these lines belong to",
    },
  },
  {
    name: "refunds",
    real: "refunds",
    description: "Refunds, the latest version of each refund.",
    pixelScoped: true,
    columns: {
      amount: "refunded amount in `currency`",
      lines: "refunded lines: (variant_id, quantity, amount)",
    },
    // Bookkeeping of the derived tables (docs/derived-tables.md), as on orders.
    hidden: ["ingested_at"],
  },
  {
    name: "order_costs",
    real: "order_costs",
    description:
      "Per-order cost snapshot (COGS, handling, shipping, gateway, order-level), latest recalculation.",
    pixelScoped: true,
    columns: {
      currency: "the order's currency",
      details: "JSON: per-line cost sources and the rules applied",
    },
  },
  {
    name: "ad_entities",
    real: "ad_entities",
    description: "Ad accounts, campaigns, ad sets and ads, the latest version of each.",
    pixelScoped: true,
    columns: {
      level: "account, campaign, adset or ad",
      currency: "budgets stay in this currency, never converted",
    },
  },
  {
    name: "ad_metrics",
    real: "ad_metrics_daily",
    description: "Daily ad spend, impressions, clicks and platform conversions per entity.",
    pixelScoped: true,
    columns: { spend: "spend in `currency`", conversion_value: "platform-reported conversion value" },
  },
  {
    name: "identities",
    real: "identity_links",
    description:
      "Identity graph: each alias (identity, email, user, store, customer, order) and its canonical identity.",
    pixelScoped: true,
    columns: {
      alias_type: "identity, email, user, store, customer or order",
      canonical_id: "the identity this alias belongs to now",
    },
    hidden: ["ingested_at"],
  },
  {
    name: "fx_rates",
    real: "fx_rates",
    description: "Daily exchange rates: units of `currency` per 1 USD (shared by every pixel).",
    pixelScoped: false,
    columns: { usd_rate: "units of `currency` per 1 USD on `date`" },
  },
];

export const ANALYST_NAMES: ReadonlySet<string> = new Set(ANALYST_TABLES.map((t) => t.name));

/** Real tables that hold a pixel_id column: the engine-side row filter covers all of them. */
export const PIXEL_TABLES = [
  "events",
  "touchpoints",
  "identity_links",
  "orders",
  "order_lines",
  "refunds",
  "order_costs",
  "ad_entities",
  "ad_metrics_daily",
] as const;

const quoteIdent = (name: string) => `\`${name.replace(/\\/g, "\\\\").replace(/`/g, "\\`")}\``;

/** The CTE body of one analyst table, reading `database` with the pixel as a bound parameter. */
export function cteBody(table: AnalystTable, database: string): string {
  const real = `${quoteIdent(database)}.${quoteIdent(table.real)}`;
  const pixel = `{${PIXEL_PARAM}:String}`;
  if (!table.pixelScoped) return `SELECT * FROM ${real} FINAL`;
  const except = ["pixel_id", ...(table.hidden ?? [])].join(", ");
  const body = `SELECT * EXCEPT (${except}) FROM ${real} FINAL WHERE pixel_id = ${pixel}`;
  if (table.name !== "order_lines") return body;
  const orders = `${quoteIdent(database)}.${quoteIdent("orders")}`;
  return `${body} AND (order_id, version) IN (SELECT order_id, version FROM ${orders} FINAL WHERE pixel_id = ${pixel})`;
}

/** `WITH` list binding every analyst name to its pixel-filtered CTE. */
export function analystCtes(database: string): string {
  return ANALYST_TABLES.map((t) => `${quoteIdent(t.name)} AS (${cteBody(t, database)})`).join(",\n  ");
}

/** A ClickHouse string literal. */
export const quoteString = (value: string) => `'${value.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

/**
 * `additional_table_filters` for every real pixel table: the engine adds `pixel_id = …` to each read
 * of those tables however the query reached them. The value is a map literal, so the pixel id travels
 * as a quoted string inside it (and is a well-formed pixel id besides).
 */
export function pixelTableFilters(database: string, pixelId: string): string {
  const filter = `pixel_id = ${quoteString(pixelId)}`;
  const entries = PIXEL_TABLES.map((t) => `${quoteString(`${database}.${t}`)}: ${quoteString(filter)}`);
  return `{${entries.join(", ")}}`;
}
