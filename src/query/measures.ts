/**
 * The semantic layer's measures as data (docs/query.md, "Measures"). A measure is either a base aggregate one
 * source computes in SQL, or a formula over other measures evaluated on totals — so ratio measures
 * are ratios of sums, never averages of ratios.
 */
export type ValueType = "count" | "currency" | "percent" | "ratio" | "number" | "duration";
export type SourceName = "orders" | "refunds" | "order_costs" | "ads" | "events" | "attribution";

export type MeasureDef =
  | { kind: "base"; source: SourceName; base: string }
  | { kind: "ratio"; num: string; den: string; scale?: number }
  | { kind: "sum"; terms: readonly { key: string; sign: 1 | -1 }[] }
  /** Report-time cost lines of the account (variable and fixed), computed from other measures. */
  | { kind: "report_cost"; cost: "variable" | "fixed" };

export interface Measure {
  key: string;
  title: string;
  shortTitle: string;
  description: string;
  category: string;
  subcategory: string;
  valueType: ValueType;
  formula: string;
  isAverage: boolean;
  isPercentage: boolean;
  preferredTrendDirection: "up" | "down" | "neutral";
  definition: MeasureDef;
}

type Spec = Omit<Measure, "isAverage" | "isPercentage" | "shortTitle" | "preferredTrendDirection"> & {
  shortTitle?: string;
  trend?: "up" | "down" | "neutral";
};

const m = (s: Spec): Measure => ({
  key: s.key,
  title: s.title,
  shortTitle: s.shortTitle ?? s.title,
  description: s.description,
  category: s.category,
  subcategory: s.subcategory,
  valueType: s.valueType,
  formula: s.formula,
  isAverage: s.definition.kind === "ratio",
  isPercentage: s.valueType === "percent",
  preferredTrendDirection: s.trend ?? "up",
  definition: s.definition,
});
const base = (source: SourceName, b: string): MeasureDef => ({ kind: "base", source, base: b });
const ratio = (num: string, den: string, scale?: number): MeasureDef =>
  scale === undefined ? { kind: "ratio", num, den } : { kind: "ratio", num, den, scale };
const plus = (...keys: string[]) => keys.map((key) => ({ key, sign: 1 as const }));
const minus = (...keys: string[]) => keys.map((key) => ({ key, sign: -1 as const }));

export const MEASURES: readonly Measure[] = [
  // Orders
  m({
    key: "orders.count",
    title: "Orders",
    description: "Counted orders placed in the period (order settings and exclusions applied)",
    category: "Core",
    subcategory: "Orders",
    valueType: "count",
    formula: "count(orders)",
    definition: base("orders", "orders_count"),
  }),
  m({
    key: "orders.total_revenue",
    title: "Total revenue",
    shortTitle: "Revenue",
    description: "Order totals including shipping and tax, before refunds",
    category: "Core",
    subcategory: "Revenue",
    valueType: "currency",
    formula: "sum(total_price)",
    definition: base("orders", "orders_total"),
  }),
  m({
    key: "orders.subtotal",
    title: "Subtotal",
    description: "Order subtotals after discounts, excluding shipping and tax",
    category: "Core",
    subcategory: "Revenue",
    valueType: "currency",
    formula: "sum(subtotal_price)",
    definition: base("orders", "orders_subtotal"),
  }),
  m({
    key: "orders.discounts",
    title: "Discounts",
    description: "Discounts given on counted orders",
    category: "Core",
    subcategory: "Revenue",
    valueType: "currency",
    formula: "sum(total_discounts)",
    trend: "down",
    definition: base("orders", "orders_discounts"),
  }),
  m({
    key: "orders.gross_sales",
    title: "Gross sales",
    description: "Item value before discounts: subtotal + discounts",
    category: "Core",
    subcategory: "Revenue",
    valueType: "currency",
    formula: "subtotal + discounts",
    definition: { kind: "sum", terms: plus("orders.subtotal", "orders.discounts") },
  }),
  m({
    key: "orders.shipping",
    title: "Shipping charged",
    description: "Shipping charged to customers",
    category: "Core",
    subcategory: "Revenue",
    valueType: "currency",
    formula: "sum(total_shipping)",
    definition: base("orders", "orders_shipping"),
  }),
  m({
    key: "orders.tax",
    title: "Tax",
    description: "Tax collected",
    category: "Core",
    subcategory: "Revenue",
    valueType: "currency",
    formula: "sum(total_tax)",
    trend: "neutral",
    definition: base("orders", "orders_tax"),
  }),
  m({
    key: "orders.refunds",
    title: "Refunds",
    description: "Refunded amounts of counted orders, dated by the refundDateAttribution setting",
    category: "Core",
    subcategory: "Revenue",
    valueType: "currency",
    formula: "sum(refund.amount)",
    trend: "down",
    definition: base("refunds", "refunds_amount"),
  }),
  m({
    key: "orders.refund_count",
    title: "Refunds issued",
    description: "Number of refunds of counted orders",
    category: "Core",
    subcategory: "Revenue",
    valueType: "count",
    formula: "count(refunds)",
    trend: "down",
    definition: base("refunds", "refunds_count"),
  }),
  m({
    key: "orders.net_revenue",
    title: "Net revenue",
    description: "Total revenue minus refunds",
    category: "Core",
    subcategory: "Revenue",
    valueType: "currency",
    formula: "total_revenue − refunds",
    definition: { kind: "sum", terms: [...plus("orders.total_revenue"), ...minus("orders.refunds")] },
  }),
  m({
    key: "orders.aov",
    title: "Average order value",
    shortTitle: "AOV",
    description: "Total revenue per counted order",
    category: "Core",
    subcategory: "Orders",
    valueType: "currency",
    formula: "total_revenue ÷ orders",
    definition: ratio("orders.total_revenue", "orders.count"),
  }),
  m({
    key: "orders.units",
    title: "Units sold",
    description: "Item quantities of counted orders",
    category: "Core",
    subcategory: "Orders",
    valueType: "count",
    formula: "sum(line.quantity)",
    definition: base("orders", "orders_units"),
  }),
  m({
    key: "orders.units_per_order",
    title: "Units per order",
    description: "Units sold per counted order",
    category: "Core",
    subcategory: "Orders",
    valueType: "number",
    formula: "units ÷ orders",
    definition: ratio("orders.units", "orders.count"),
  }),
  // Customers
  m({
    key: "customers.count",
    title: "Customers",
    description: "Distinct customers with a counted order in the period",
    category: "Customers",
    subcategory: "Customers",
    valueType: "count",
    formula: "uniq(customer)",
    definition: base("orders", "customers_unique"),
  }),
  m({
    key: "customers.new",
    title: "New customers",
    description: "Customers whose first counted order ever is in the period",
    category: "Customers",
    subcategory: "Customers",
    valueType: "count",
    formula: "uniq(customer with order #1 in period)",
    definition: base("orders", "customers_new"),
  }),
  m({
    key: "customers.returning",
    title: "Returning customers",
    description: "Customers with an order in the period and a counted order before it",
    category: "Customers",
    subcategory: "Customers",
    valueType: "count",
    formula: "uniq(customer with order #2+ in period)",
    definition: base("orders", "customers_returning"),
  }),
  m({
    key: "customers.repeat_rate",
    title: "Repeat rate",
    description: "Share of the period's customers who are returning",
    category: "Customers",
    subcategory: "Retention",
    valueType: "percent",
    formula: "returning ÷ customers × 100",
    definition: ratio("customers.returning", "customers.count", 100),
  }),
  m({
    key: "customers.new_customer_orders",
    title: "New customer orders",
    description: "Counted orders that are a customer's first",
    category: "Customers",
    subcategory: "Orders",
    valueType: "count",
    formula: "count(order #1)",
    definition: base("orders", "orders_first"),
  }),
  m({
    key: "customers.revenue_per_customer",
    title: "Revenue per customer",
    description: "Total revenue per distinct customer",
    category: "Customers",
    subcategory: "Revenue",
    valueType: "currency",
    formula: "total_revenue ÷ customers",
    definition: ratio("orders.total_revenue", "customers.count"),
  }),
  // Ads
  m({
    key: "ads.spend",
    title: "Ad spend",
    shortTitle: "Spend",
    description: "Spend reported by the ad platforms, at the deepest level each account reports",
    category: "Marketing",
    subcategory: "Ads",
    valueType: "currency",
    formula: "sum(spend)",
    trend: "neutral",
    definition: base("ads", "ads_spend"),
  }),
  m({
    key: "ads.impressions",
    title: "Impressions",
    description: "Ad impressions",
    category: "Marketing",
    subcategory: "Ads",
    valueType: "count",
    formula: "sum(impressions)",
    definition: base("ads", "ads_impressions"),
  }),
  m({
    key: "ads.clicks",
    title: "Clicks",
    description: "Ad clicks",
    category: "Marketing",
    subcategory: "Ads",
    valueType: "count",
    formula: "sum(clicks)",
    definition: base("ads", "ads_clicks"),
  }),
  m({
    key: "ads.ctr",
    title: "Click-through rate",
    shortTitle: "CTR",
    description: "Clicks per impression",
    category: "Marketing",
    subcategory: "Ads",
    valueType: "percent",
    formula: "clicks ÷ impressions × 100",
    definition: ratio("ads.clicks", "ads.impressions", 100),
  }),
  m({
    key: "ads.cpc",
    title: "Cost per click",
    shortTitle: "CPC",
    description: "Spend per click",
    category: "Marketing",
    subcategory: "Ads",
    valueType: "currency",
    formula: "spend ÷ clicks",
    trend: "down",
    definition: ratio("ads.spend", "ads.clicks"),
  }),
  m({
    key: "ads.cpm",
    title: "Cost per mille",
    shortTitle: "CPM",
    description: "Spend per 1,000 impressions",
    category: "Marketing",
    subcategory: "Ads",
    valueType: "currency",
    formula: "spend ÷ impressions × 1000",
    trend: "down",
    definition: ratio("ads.spend", "ads.impressions", 1000),
  }),
  m({
    key: "ads.platform_conversions",
    title: "Platform conversions",
    description: "Conversions the ad platforms report",
    category: "Marketing",
    subcategory: "Platform-reported",
    valueType: "number",
    formula: "sum(conversions)",
    definition: base("ads", "ads_conversions"),
  }),
  m({
    key: "ads.platform_conversion_value",
    title: "Platform conversion value",
    description: "Conversion value the ad platforms report",
    category: "Marketing",
    subcategory: "Platform-reported",
    valueType: "currency",
    formula: "sum(conversion_value)",
    definition: base("ads", "ads_conversion_value"),
  }),
  m({
    key: "ads.platform_roas",
    title: "Platform ROAS",
    description: "Platform conversion value per unit of spend",
    category: "Marketing",
    subcategory: "Platform-reported",
    valueType: "ratio",
    formula: "platform_conversion_value ÷ spend",
    definition: ratio("ads.platform_conversion_value", "ads.spend"),
  }),
  // Attribution (model and window from the query)
  m({
    key: "attribution.orders",
    title: "Attributed orders",
    description:
      "Counted orders credited to a touch by the query's model and window; fractional under linear, time_decay and position_based",
    category: "Attribution",
    subcategory: "Attribution",
    valueType: "number",
    formula:
      "orders with a touch in the window (any_click: per touched value; linear, time_decay, position_based: Σ shares)",
    definition: base("attribution", "attr_orders"),
  }),
  m({
    key: "attribution.revenue",
    title: "Attributed revenue",
    description:
      "Net revenue of attributed orders (or event value for valueSource events), times the credited share under fractional models",
    category: "Attribution",
    subcategory: "Attribution",
    valueType: "currency",
    formula: "sum(net revenue of attributed orders)",
    definition: base("attribution", "attr_revenue"),
  }),
  m({
    key: "attribution.roas",
    title: "ROAS",
    description: "Attributed revenue per unit of ad spend",
    category: "Attribution",
    subcategory: "Attribution",
    valueType: "ratio",
    formula: "attributed_revenue ÷ spend",
    definition: ratio("attribution.revenue", "ads.spend"),
  }),
  m({
    key: "attribution.cpa",
    title: "Cost per acquisition",
    shortTitle: "CPA",
    description: "Ad spend per attributed order",
    category: "Attribution",
    subcategory: "Attribution",
    valueType: "currency",
    formula: "spend ÷ attributed_orders",
    trend: "down",
    definition: ratio("ads.spend", "attribution.orders"),
  }),
  m({
    key: "attribution.aov",
    title: "Attributed AOV",
    description: "Attributed revenue per attributed order",
    category: "Attribution",
    subcategory: "Attribution",
    valueType: "currency",
    formula: "attributed_revenue ÷ attributed_orders",
    definition: ratio("attribution.revenue", "attribution.orders"),
  }),
  // Events
  m({
    key: "events.count",
    title: "Events",
    description: "Accepted events",
    category: "Traffic",
    subcategory: "Events",
    valueType: "count",
    formula: "count(events)",
    definition: base("events", "events_count"),
  }),
  m({
    key: "events.unique_identities",
    title: "Visitors",
    description: "Distinct identities (after identity-graph merges) with an event",
    category: "Traffic",
    subcategory: "Events",
    valueType: "count",
    formula: "uniq(identity)",
    definition: base("events", "events_identities"),
  }),
  m({
    key: "events.page_views",
    title: "Page views",
    description: "page_view events",
    category: "Traffic",
    subcategory: "Events",
    valueType: "count",
    formula: "count(page_view)",
    definition: base("events", "events_page_views"),
  }),
  m({
    key: "events.purchases",
    title: "Purchase events",
    description: "purchase events",
    category: "Traffic",
    subcategory: "Events",
    valueType: "count",
    formula: "count(purchase)",
    definition: base("events", "events_purchases"),
  }),
  m({
    key: "events.purchasers",
    title: "Purchasing visitors",
    description: "Distinct identities with a purchase event",
    category: "Traffic",
    subcategory: "Events",
    valueType: "count",
    formula: "uniq(identity with purchase)",
    definition: base("events", "events_purchasers"),
  }),
  m({
    key: "events.conversion_rate",
    title: "Conversion rate",
    description: "Share of visitors with a purchase event",
    category: "Traffic",
    subcategory: "Conversion",
    valueType: "percent",
    formula: "purchasers ÷ visitors × 100",
    definition: ratio("events.purchasers", "events.unique_identities", 100),
  }),
  m({
    key: "events.value",
    title: "Event value",
    description: "Sum of event values (purchase events carry the order value)",
    category: "Traffic",
    subcategory: "Events",
    valueType: "currency",
    formula: "sum(value)",
    definition: base("events", "events_value"),
  }),
  // Costs and profit
  m({
    key: "costs.cogs",
    title: "Cost of goods sold",
    shortTitle: "COGS",
    description: "Per-order COGS snapshots of counted orders",
    category: "Profit",
    subcategory: "Costs",
    valueType: "currency",
    formula: "sum(order_costs.cogs)",
    trend: "down",
    definition: base("order_costs", "cost_cogs"),
  }),
  m({
    key: "costs.handling",
    title: "Handling fees",
    description: "Per-order handling fees",
    category: "Profit",
    subcategory: "Costs",
    valueType: "currency",
    formula: "sum(order_costs.handling)",
    trend: "down",
    definition: base("order_costs", "cost_handling"),
  }),
  m({
    key: "costs.shipping",
    title: "Shipping costs",
    description: "Shipping cost rules applied per order",
    category: "Profit",
    subcategory: "Costs",
    valueType: "currency",
    formula: "sum(order_costs.shipping)",
    trend: "down",
    definition: base("order_costs", "cost_shipping"),
  }),
  m({
    key: "costs.gateway",
    title: "Payment gateway fees",
    description: "Gateway fees per order",
    category: "Profit",
    subcategory: "Costs",
    valueType: "currency",
    formula: "sum(order_costs.gateway)",
    trend: "down",
    definition: base("order_costs", "cost_gateway"),
  }),
  m({
    key: "costs.order_level",
    title: "Order-level costs",
    description: "Order cost lines applied per order",
    category: "Profit",
    subcategory: "Costs",
    valueType: "currency",
    formula: "sum(order_costs.order_level)",
    trend: "down",
    definition: base("order_costs", "cost_order_level"),
  }),
  m({
    key: "costs.order_costs",
    title: "Order costs",
    description: "COGS, handling, shipping, gateway and order-level costs",
    category: "Profit",
    subcategory: "Costs",
    valueType: "currency",
    formula: "cogs + handling + shipping + gateway + order_level",
    trend: "down",
    definition: {
      kind: "sum",
      terms: plus("costs.cogs", "costs.handling", "costs.shipping", "costs.gateway", "costs.order_level"),
    },
  }),
  m({
    key: "costs.variable",
    title: "Variable costs",
    description: "Report-time variable cost lines: % of ad spend, % of revenue, per order",
    category: "Profit",
    subcategory: "Costs",
    valueType: "currency",
    formula: "Σ rate × base per line",
    trend: "down",
    definition: { kind: "report_cost", cost: "variable" },
  }),
  m({
    key: "costs.fixed",
    title: "Fixed costs",
    description: "Report-time fixed cost lines prorated per day",
    category: "Profit",
    subcategory: "Costs",
    valueType: "currency",
    formula: "Σ amount ÷ days of its frequency × days",
    trend: "down",
    definition: { kind: "report_cost", cost: "fixed" },
  }),
  m({
    key: "costs.total",
    title: "Total costs",
    description: "Order costs, ad spend, variable and fixed costs",
    category: "Profit",
    subcategory: "Costs",
    valueType: "currency",
    formula: "order_costs + spend + variable + fixed",
    trend: "down",
    definition: {
      kind: "sum",
      terms: plus("costs.order_costs", "ads.spend", "costs.variable", "costs.fixed"),
    },
  }),
  m({
    key: "profit.gross_profit",
    title: "Gross profit",
    description: "Net revenue minus COGS",
    category: "Profit",
    subcategory: "Profit",
    valueType: "currency",
    formula: "net_revenue − cogs",
    definition: { kind: "sum", terms: [...plus("orders.net_revenue"), ...minus("costs.cogs")] },
  }),
  m({
    key: "profit.net_profit",
    title: "Net profit",
    description: "Net revenue minus every cost",
    category: "Profit",
    subcategory: "Profit",
    valueType: "currency",
    formula: "net_revenue − total_costs",
    definition: { kind: "sum", terms: [...plus("orders.net_revenue"), ...minus("costs.total")] },
  }),
  m({
    key: "profit.gross_margin",
    title: "Gross margin",
    description: "Gross profit as a share of net revenue",
    category: "Profit",
    subcategory: "Profit",
    valueType: "percent",
    formula: "gross_profit ÷ net_revenue × 100",
    definition: ratio("profit.gross_profit", "orders.net_revenue", 100),
  }),
  m({
    key: "profit.margin",
    title: "Net margin",
    description: "Net profit as a share of net revenue",
    category: "Profit",
    subcategory: "Profit",
    valueType: "percent",
    formula: "net_profit ÷ net_revenue × 100",
    definition: ratio("profit.net_profit", "orders.net_revenue", 100),
  }),
  m({
    key: "profit.mer",
    title: "Marketing efficiency ratio",
    shortTitle: "MER",
    description: "Net revenue per unit of ad spend",
    category: "Profit",
    subcategory: "Efficiency",
    valueType: "ratio",
    formula: "net_revenue ÷ spend",
    definition: ratio("orders.net_revenue", "ads.spend"),
  }),
  m({
    key: "profit.poas",
    title: "Profit on ad spend",
    shortTitle: "POAS",
    description: "Gross profit per unit of ad spend",
    category: "Profit",
    subcategory: "Efficiency",
    valueType: "ratio",
    formula: "gross_profit ÷ spend",
    definition: ratio("profit.gross_profit", "ads.spend"),
  }),
];

export const MEASURE_BY_KEY: ReadonlyMap<string, Measure> = new Map(MEASURES.map((x) => [x.key, x]));

/** The base aggregates a set of measures needs, per source (formulas expanded). */
export function basesOf(keys: readonly string[]): Map<SourceName, Set<string>> {
  const out = new Map<SourceName, Set<string>>();
  const seen = new Set<string>();
  const visit = (key: string) => {
    if (seen.has(key)) return;
    seen.add(key);
    const def = MEASURE_BY_KEY.get(key)?.definition;
    if (!def) return;
    if (def.kind === "base") {
      if (!out.has(def.source)) out.set(def.source, new Set());
      out.get(def.source)!.add(def.base);
    } else if (def.kind === "ratio") {
      visit(def.num);
      visit(def.den);
    } else if (def.kind === "sum") for (const t of def.terms) visit(t.key);
    else {
      // Variable costs rest on spend, net revenue and order counts; fixed costs on days only.
      if (def.cost === "variable")
        for (const k of ["ads.spend", "orders.net_revenue", "orders.count"]) visit(k);
    }
  };
  for (const k of keys) visit(k);
  return out;
}
