import type { Operator } from "./schema.js";

export const FAMILIES = ["orders", "attribution", "channel", "events", "customers"] as const;
export type Family = (typeof FAMILIES)[number];
export type FieldType = "string" | "number" | "datetime" | "string_array" | "boolean";

// Text and list fields take the same operators (lists apply them to their elements).
const TEXT_OPERATORS: readonly Operator[] = [
  "equals",
  "not_equals",
  "in",
  "not_in",
  "contains",
  "not_contains",
  "starts_with",
  "ends_with",
  "is_set",
  "is_not_set",
];

export const OPERATORS_BY_TYPE: Record<FieldType, readonly Operator[]> = {
  string: TEXT_OPERATORS,
  number: [
    "equals",
    "not_equals",
    "in",
    "not_in",
    "gt",
    "gte",
    "lt",
    "lte",
    "between",
    "is_set",
    "is_not_set",
  ],
  datetime: ["equals", "not_equals", "gt", "gte", "lt", "lte", "between", "is_set", "is_not_set"],
  string_array: TEXT_OPERATORS,
  boolean: ["equals", "not_equals", "is_set", "is_not_set"],
};

/**
 * A filterable field. `column` is the SQL expression over the family's row alias (`o` orders, `t`
 * touches, `c` channel entities or metrics, `e` events); it comes from this allowlist only.
 */
export interface FieldDef {
  field: string;
  family: Family;
  type: FieldType;
  description: string;
  column: string;
}

const f = (field: string, type: FieldType, column: string, description: string): FieldDef => ({
  field,
  family: field.slice(0, field.indexOf(".")) as Family,
  type,
  column,
  description,
});

export const FIELDS: readonly FieldDef[] = [
  f("orders.order_id", "string", "o.order_id", "The store's order id"),
  f(
    "orders.financial_status",
    "string",
    "o.financial_status",
    "pending, authorized, paid, partially_paid, partially_refunded, refunded or voided",
  ),
  f("orders.source_name", "string", "o.source_name", "Where the order came from (web, pos, draft_orders, …)"),
  f("orders.gateway", "string", "o.gateway", "Payment gateway"),
  f("orders.country", "string", "o.country", "Shipping or billing country (ISO 3166-1 alpha-2)"),
  f("orders.currency", "string", "o.currency", "The order's own currency"),
  f("orders.tags", "string_array", "o.tags", "Order tags"),
  f("orders.discount_codes", "string_array", "o.discount_codes", "Discount codes used"),
  f("orders.total_price", "number", "toFloat64(o.total_price)", "Order total in its own currency"),
  f("orders.subtotal_price", "number", "toFloat64(o.subtotal_price)", "Order subtotal in its own currency"),
  f("orders.created_at", "datetime", "o.created_at", "When the order was placed (ISO-8601 or YYYY-MM-DD)"),
  f("orders.customer_id", "string", "o.customer_id", "The store's customer id"),
  f(
    "customers.id",
    "string",
    "o.customer_key",
    "Customer key: store customer id, else the email hash, else the order id",
  ),
  f("customers.is_returning", "boolean", "o.is_returning", "The customer had an earlier counted order"),
  f(
    "customers.order_number",
    "number",
    "o.customer_order_number",
    "1 for a customer's first counted order, 2 for the second, …",
  ),
  f(
    "attribution.channel",
    "string",
    "t.channel",
    "Classified channel of the touch (paid_social, organic_search, email, …)",
  ),
  f("attribution.source", "string", "t.source", "Normalized source of the touch (facebook, google, …)"),
  f("attribution.medium", "string", "t.medium", "utm_medium of the touch"),
  f("attribution.campaign", "string", "t.campaign", "utm_campaign of the touch"),
  f("attribution.campaign_id", "string", "t.campaign_id", "Ad campaign id of the touch"),
  f("attribution.adset_id", "string", "t.adset_id", "Ad set id of the touch"),
  f("attribution.ad_id", "string", "t.ad_id", "Ad id of the touch"),
  f("attribution.click_id_type", "string", "t.click_id_type", "Click id carried (gclid, fbclid, ttclid, …)"),
  f("attribution.referrer_host", "string", "t.referrer_host", "Referring host of the touch"),
  f("channel.resource_source", "string", "c.platform", "Ad platform (facebook, google, tiktok, …)"),
  f("channel.account_id", "string", "if(c.level = 'account', c.entity_id, c.account_id)", "Ad account id"),
  f(
    "channel.campaign_id",
    "string",
    "if(c.level = 'campaign', c.entity_id, c.campaign_id)",
    "Campaign id (the entity's own at campaign level, its parent below)",
  ),
  f(
    "channel.adset_id",
    "string",
    "if(c.level = 'adset', c.entity_id, c.adset_id)",
    "Ad set id (the entity's own at ad set level, its parent at ad level)",
  ),
  f("channel.ad_id", "string", "if(c.level = 'ad', c.entity_id, '')", "Ad id (ad level)"),
  f("channel.level", "string", "toString(c.level)", "account, campaign, adset or ad"),
  f("events.name", "string", "e.name", "Event name (page_view, add_to_cart, purchase, …)"),
  f("events.origin", "string", "toString(e.origin)", "browser or server"),
  f("events.channel", "string", "e.channel", "Classified channel of the event"),
  f("events.source", "string", "e.source", "Normalized source of the event"),
  f("events.utm_source", "string", "e.utm_source", "utm_source"),
  f("events.utm_medium", "string", "e.utm_medium", "utm_medium"),
  f("events.utm_campaign", "string", "e.utm_campaign", "utm_campaign"),
  f("events.page_host", "string", "e.page_host", "Host of the page"),
  f("events.page_path", "string", "e.page_path", "Path of the page"),
  f("events.referrer_host", "string", "e.referrer_host", "Referring host"),
  f("events.browser", "string", "e.ua_browser", "Browser family"),
  f("events.os", "string", "e.ua_os", "Operating system"),
  f("events.device", "string", "e.ua_device", "Device type"),
  f("events.locale", "string", "e.locale", "Browser locale"),
  f("events.value", "number", "toFloat64(e.value)", "Event value in its own currency"),
  f("events.currency", "string", "e.currency", "Currency of the event value"),
];

export const FIELD_BY_NAME: ReadonlyMap<string, FieldDef> = new Map(FIELDS.map((d) => [d.field, d]));
