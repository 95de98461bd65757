import { hashEmail } from "../ingest/enrich/email.js";
import { toNumericText } from "../shared/money.js";
import { formatDateTime } from "../stores/warehouse/port.js";
import type { AdEntityRecord, AdMetricsRecord, FxRateRecord, OrderRecord, RefundRecord } from "./schemas.js";

/** Records → rows of the warehouse tables in sql/clickhouse/001_init.sql. Pure. */

// The shortest decimal text rounded at 4 places: toFixed(4) printed the binary expansion (…0.01 → …0.0078).
const money = (v: number) => toNumericText(v);
const moneyOrNull = (v: number | null | undefined) => (v === null || v === undefined ? null : money(v));
// Connectors send UTC instants as `…T…Z` almost always: those become the warehouse's text form by
// slicing (an import spends a third of its row-building time in Date otherwise); any other offset or
// precision goes through Date.
const UTC_ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?Z$/;
const time = (iso: string) => {
  if (!UTC_ISO.test(iso)) return formatDateTime(new Date(iso));
  const frac = iso.length > 20 ? iso.slice(20, -1).padEnd(3, "0") : "000";
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}.${frac}`;
};
const timeOrNull = (iso: string | null | undefined) => (iso ? time(iso) : null);
export const versionOf = (iso: string) => Date.parse(iso);

export function orderRow(pixelId: string, o: OrderRecord, canonicalId: string) {
  return {
    pixel_id: pixelId,
    order_id: o.id,
    created_at: time(o.createdAt),
    processed_at: timeOrNull(o.processedAt),
    cancelled_at: timeOrNull(o.cancelledAt),
    currency: o.currency,
    total_price: money(o.totalPrice),
    subtotal_price: money(o.subtotalPrice),
    total_shipping: money(o.totalShipping),
    total_tax: money(o.totalTax),
    total_discounts: money(o.totalDiscounts),
    financial_status: o.financialStatus,
    source_name: o.sourceName,
    gateway: o.gateway,
    tags: o.tags,
    discount_codes: o.discountCodes,
    country: o.country,
    customer_id: o.customer.id ?? "",
    customer_email_hash: o.customer.email ? (hashEmail(o.customer.email) ?? "") : "",
    canonical_id: canonicalId,
    version: versionOf(o.updatedAt),
    updated_at: time(o.updatedAt),
  };
}

export function orderLineRows(pixelId: string, o: OrderRecord) {
  return o.lineItems.map((l, i) => ({
    pixel_id: pixelId,
    order_id: o.id,
    line_index: i,
    product_id: l.productId ?? "",
    variant_id: l.variantId ?? "",
    sku: l.sku,
    quantity: l.quantity,
    price: money(l.price),
    version: versionOf(o.updatedAt),
  }));
}

export function refundRow(pixelId: string, r: RefundRecord) {
  return {
    pixel_id: pixelId,
    refund_id: r.id,
    order_id: r.orderId,
    created_at: time(r.createdAt),
    amount: money(r.amount),
    currency: r.currency,
    lines: r.lineItems.map((l) => ({
      variant_id: l.variantId,
      quantity: l.quantity,
      amount: money(l.amount),
    })),
    version: versionOf(r.updatedAt ?? r.createdAt),
  };
}

export function adEntityRow(pixelId: string, e: AdEntityRecord) {
  return {
    pixel_id: pixelId,
    platform: e.platform,
    level: e.level,
    entity_id: e.id,
    account_id: e.accountId,
    campaign_id: e.level === "campaign" ? e.id : (e.campaignId ?? ""),
    adset_id: e.level === "adset" ? e.id : (e.adsetId ?? ""),
    name: e.name,
    status: e.status,
    currency: e.currency,
    daily_budget: moneyOrNull(e.dailyBudget),
    budget_remaining: moneyOrNull(e.budgetRemaining),
    amount_spent: moneyOrNull(e.amountSpent),
    source_created_at: time(e.sourceCreatedAt),
    source_updated_at: time(e.sourceUpdatedAt),
    version: versionOf(e.sourceUpdatedAt),
  };
}

export function adMetricsRow(pixelId: string, m: AdMetricsRecord, version: number) {
  return {
    pixel_id: pixelId,
    platform: m.platform,
    level: m.level,
    entity_id: m.entityId,
    account_id: m.accountId,
    campaign_id: m.level === "campaign" ? m.entityId : (m.campaignId ?? ""),
    adset_id: m.level === "adset" ? m.entityId : (m.adsetId ?? ""),
    date: m.date,
    currency: m.currency,
    spend: money(m.spend),
    impressions: m.impressions,
    clicks: m.clicks,
    conversions: m.conversions.toFixed(4),
    conversion_value: money(m.conversionValue),
    version,
  };
}

export function fxRow(r: FxRateRecord, version: number) {
  return { date: r.date, currency: r.currency, usd_rate: r.unitsPerUsd.toFixed(10), version };
}
