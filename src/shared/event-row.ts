/**
 * One accepted event as it is written to the warehouse `events` table (sql/clickhouse/001_init.sql).
 * Column names are the table's; times are UTC text `YYYY-MM-DD HH:MM:SS.mmm`; money is a decimal
 * string. Everything the pipeline derives (identity, enrichment) is filled in before the write.
 */
export interface EventRow {
  pixel_id: string;
  event_id: string;
  client_event_id: boolean;
  name: string;
  event_time: string;
  received_at: string;
  origin: "server" | "browser";
  request_id: string;
  identity_id: string;
  canonical_id: string;
  email_hashes: string[];
  user_ids: string[];
  store_ids: string[];
  ip: string;
  user_agent: string;
  ua_browser: string;
  ua_browser_version: string;
  ua_os: string;
  ua_device: string;
  locale: string;
  page_url: string;
  page_host: string;
  page_path: string;
  referrer: string;
  referrer_host: string;
  utm_source: string;
  utm_medium: string;
  utm_campaign: string;
  utm_term: string;
  utm_content: string;
  utm_id: string;
  click_ids: Record<string, string>;
  fbc: string;
  fbp: string;
  channel: string;
  source: string;
  campaign_id: string;
  adset_id: string;
  ad_id: string;
  is_touch: boolean;
  order_id: string;
  value: string | null;
  currency: string;
  items: { id: string; name: string; price: string; quantity: number }[];
  viewport_width: number | null;
  viewport_height: number | null;
  page_height: number | null;
  device_pixel_ratio: number | null;
  properties: string;
}

/**
 * What forwarders get besides the row: the original, untruncated values a destination needs
 * (full IP, raw user agent) that the warehouse row deliberately does not keep.
 */
export interface ForwardableEvent {
  row: EventRow;
  /** The IP before truncation ('' when unknown). */
  originalIp: string;
}
