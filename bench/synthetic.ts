/**
 * A synthetic store of N events built inside the warehouse (INSERT … SELECT from numbers(): nothing
 * crosses the process boundary row by row), for bench:query at sizes the demo loader cannot reach.
 *
 *   node --import tsx bench/synthetic.ts N DATA_DIR   → prints {"dataDir", "events", "orders", "seconds"}
 *
 * One pixel ("demo", its account with default order settings), one year ending yesterday, uniform in
 * time. Per N events: N/6 visitors (canonical ids `v<k>`), 5 % touches (every 20th event; channel,
 * source and campaign from small sets, ads ids for paid ones), N/120 orders in USD, EUR and GBP with
 * 1–2 lines, 6 % refunded partly a week later, order costs, 1 % of visitors merged into another
 * (a `canonical` identity link, resolved in one hop as the real graph is), daily FX rates, and
 * daily ad metrics for 60 campaigns × 3 ad sets × 2 ads. Touches reach `touchpoints` through its
 * materialized view, as written events do.
 */
import { mkdirSync } from "node:fs";
import { loadConfig } from "../src/config.js";
import { createLogger } from "../src/log.js";
import { buildServices } from "../src/services.js";
import { openStores } from "../src/stores/index.js";
import { migrate } from "../src/stores/migrations.js";

const [nArg, dataDir] = process.argv.slice(2);
const N = Number(nArg);
if (!Number.isInteger(N) || N < 1000 || !dataDir) {
  process.stderr.write("usage: bench/synthetic.ts EVENTS DATA_DIR (EVENTS ≥ 1000)\n");
  process.exit(2);
}
const PIXEL = "demo";
const log = (s: string) => process.stderr.write(`${s}\n`);

mkdirSync(dataDir, { recursive: true });
const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: "silent" });
const stores = await openStores(config, "bench synthetic");
await migrate(stores.sql, stores.warehouse);
const services = buildServices(stores, config, createLogger("silent"));
if (!(await services.pixels.get(PIXEL))) {
  await services.pixels.create({ id: PIXEL, name: "Synthetic Store", accountName: "Synthetic Store" });
}

const wh = stores.warehouse;
const t0 = performance.now();
const visitors = Math.max(1, Math.floor(N / 6));
const orders = Math.max(1, Math.floor(N / 120));
const endDay = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
// Seconds from the start of the year-long period; `x` is the row number.
const start = `toDateTime64('${endDay} 00:00:00', 3, 'UTC') - INTERVAL 364 DAY`;
const at = (x: string, of: number) => `${start} + toIntervalMillisecond(intDiv(${x} * 31449600000, ${of}))`;
const pick = (list: readonly string[], h: string) =>
  `[${list.map((v) => `'${v}'`).join(",")}][1 + (${h}) % ${list.length}]`;

const CHANNELS = ["paid_social", "paid_search", "organic_search", "email", "referral", "direct"];
const SOURCES = ["facebook", "google", "google", "klaviyo", "blog.example", "(direct)"];
const CURRENCIES = ["USD", "USD", "EUR", "GBP"];

async function step(what: string, sql: string, settings: Record<string, string> = {}) {
  const t = performance.now();
  await wh.command(sql, undefined, { settings: { max_insert_threads: "2", max_threads: "2", ...settings } });
  log(`  ${what}: ${((performance.now() - t) / 1000).toFixed(1)} s`);
}

log(
  `synthetic store: ${N.toLocaleString("en-US")} events, ${visitors.toLocaleString("en-US")} visitors, ${orders.toLocaleString("en-US")} orders, year ending ${endDay}`,
);
// Events in chunks: one INSERT of 100M rows would hold too much at once.
const CHUNK = 10_000_000;
for (let from = 0; from < N; from += CHUNK) {
  const count = Math.min(CHUNK, N - from);
  await step(
    `events ${from.toLocaleString("en-US")}+${count.toLocaleString("en-US")}`,
    `INSERT INTO events (pixel_id, event_id, client_event_id, name, event_time, received_at, origin, request_id,
       identity_id, canonical_id, page_url, page_host, page_path, channel, source, utm_source, utm_medium,
       utm_campaign, campaign_id, adset_id, ad_id, is_touch, order_id, value, currency, properties)
     SELECT '${PIXEL}', concat('e', toString(n)), true,
       if(n % 20 = 0, 'page_view', ${pick(["page_view", "page_view", "page_view", "view_item", "add_to_cart", "begin_checkout"], "intHash32(n)")}),
       ${at("n", N)} AS t, t, 'browser', '',
       concat('a', toString(v)), concat('v', toString(v)),
       'https://shop.example/p', 'shop.example', '/p',
       if(touch, ${pick(CHANNELS, "intHash32(n + 7)")}, 'direct') AS ch,
       if(touch, ${pick(SOURCES, "intHash32(n + 7)")}, '(direct)') AS src,
       if(touch, src, ''), if(touch, ${pick(["cpc", "paid_social", "email", "organic"], "intHash32(n + 7)")}, ''),
       if(touch, concat('camp', toString(intHash32(n + 11) % 60)), ''),
       if(touch AND ch IN ('paid_social', 'paid_search'), concat('c', toString(intHash32(n + 11) % 60)), ''),
       if(touch AND ch IN ('paid_social', 'paid_search'), concat('c', toString(intHash32(n + 11) % 60), 's', toString(intHash32(n + 13) % 3)), ''),
       if(touch AND ch IN ('paid_social', 'paid_search'), concat('c', toString(intHash32(n + 11) % 60), 's', toString(intHash32(n + 13) % 3), 'a', toString(intHash32(n + 17) % 2)), ''),
       touch, '', NULL, '', '{}'
     FROM (SELECT number + ${from} AS n, intHash64(number + ${from}) % ${visitors} AS v, (number + ${from}) % 20 = 0 AS touch
           FROM numbers(${count}))`,
  );
}
await step(
  "orders",
  `INSERT INTO orders (pixel_id, order_id, created_at, currency, total_price, subtotal_price, total_shipping, total_tax,
     total_discounts, financial_status, source_name, gateway, country, customer_id, canonical_id, version, updated_at)
   SELECT '${PIXEL}', concat('o', toString(n)), ${at("n", orders)} AS t, ${pick(CURRENCIES, "intHash32(n)")},
     toDecimal64(20 + intHash32(n + 1) % 28000 / 100, 4) AS total, total, 0, 0, 0,
     if(n % 16 = 0, 'partially_refunded', 'paid'), 'web', 'stripe', ${pick(["US", "DE", "FR", "GB"], "intHash32(n + 2)")},
     concat('cust', toString(intHash64(n) % ${visitors})), concat('v', toString(intHash64(n) % ${visitors})), 1, t
   FROM (SELECT number AS n FROM numbers(${orders}))`,
);
await step(
  "order lines",
  `INSERT INTO order_lines (pixel_id, order_id, line_index, product_id, variant_id, sku, quantity, price, version)
   SELECT '${PIXEL}', concat('o', toString(n)), i, concat('p', toString(intHash32(n + i) % 200)),
     concat('var', toString(intHash32(n + i) % 500)), concat('sku', toString(intHash32(n + i) % 500)), 1,
     toDecimal64(10 + intHash32(n + i) % 10000 / 100, 4), 1
   FROM (SELECT number AS n, arrayJoin(range(1 + number % 2)) AS i FROM numbers(${orders}))`,
);
await step(
  "refunds",
  `INSERT INTO refunds (pixel_id, refund_id, order_id, created_at, amount, currency, lines, version)
   SELECT '${PIXEL}', concat('r', toString(n)), concat('o', toString(n)),
     least(${at("n", orders)} + INTERVAL 7 DAY, now64(3)), toDecimal64(5, 4), ${pick(CURRENCIES, "intHash32(n)")}, [], 1
   FROM (SELECT number AS n FROM numbers(${orders}) WHERE number % 16 = 0)`,
);
await step(
  "order costs",
  `INSERT INTO order_costs (pixel_id, order_id, version, computed_at, currency, cogs, handling, shipping, gateway, order_level, details)
   SELECT '${PIXEL}', concat('o', toString(n)), 1, now64(3), ${pick(CURRENCIES, "intHash32(n)")},
     toDecimal64(8 + intHash32(n + 3) % 4000 / 100, 4), 1, 3, 0.5, 0, '{}'
   FROM (SELECT number AS n FROM numbers(${orders}))`,
);
await step(
  "identity merges (1 % of visitors)",
  `INSERT INTO identity_links (pixel_id, alias_type, alias_value, canonical_id, first_seen, version)
   SELECT '${PIXEL}', 'canonical', concat('v', toString(v)), concat('v', toString(v + 1)), now64(3), 1
   FROM (SELECT number * 100 AS v FROM numbers(${Math.max(1, Math.floor(visitors / 100))}))`,
);
await step(
  "fx rates",
  `INSERT INTO fx_rates (date, currency, usd_rate, version)
   SELECT toDate('${endDay}') - d, c, toDecimal128(if(c = 'EUR', 0.92, 0.79) + (d % 30) / 1000, 10), 1
   FROM (SELECT number AS d FROM numbers(400)) ARRAY JOIN ['EUR', 'GBP'] AS c`,
);
await step(
  "ad entities and metrics",
  `INSERT INTO ad_metrics_daily (pixel_id, platform, level, entity_id, account_id, campaign_id, adset_id, date, currency,
     spend, impressions, clicks, conversions, conversion_value, version)
   SELECT '${PIXEL}', if(c % 2 = 0, 'facebook', 'google'), 'ad', concat('c', toString(c), 's', toString(s), 'a', toString(a)),
     'acct', concat('c', toString(c)), concat('c', toString(c), 's', toString(s)),
     toDate('${endDay}') - d, 'USD', toDecimal64(1 + intHash32(c * 1000 + d) % 5000 / 100, 4), 1000, 20, 1, 50, 1
   FROM (SELECT number AS d FROM numbers(365)) ARRAY JOIN range(60) AS c ARRAY JOIN range(3) AS s ARRAY JOIN range(2) AS a`,
);
await step(
  "ad entities",
  `INSERT INTO ad_entities (pixel_id, platform, level, entity_id, account_id, campaign_id, adset_id, name, status, currency,
     source_created_at, source_updated_at, version)
   SELECT '${PIXEL}', if(c % 2 = 0, 'facebook', 'google'), 'campaign', concat('c', toString(c)), 'acct', concat('c', toString(c)), '',
     concat('Campaign ', toString(c)), 'ACTIVE', 'USD', now64(3), now64(3), 1
   FROM (SELECT number AS c FROM numbers(60))`,
);
await step(
  "ad sets and ads",
  `INSERT INTO ad_entities (pixel_id, platform, level, entity_id, account_id, campaign_id, adset_id, name, status, currency,
     source_created_at, source_updated_at, version)
   SELECT '${PIXEL}', if(c % 2 = 0, 'facebook', 'google'), if(a < 0, 'adset', 'ad'),
     if(a < 0, concat('c', toString(c), 's', toString(s)), concat('c', toString(c), 's', toString(s), 'a', toString(a))),
     'acct', concat('c', toString(c)), concat('c', toString(c), 's', toString(s)),
     if(a < 0, concat('Ad set ', toString(c), '/', toString(s)), concat('Ad ', toString(c), '/', toString(s), '/', toString(a))),
     'ACTIVE', 'USD', now64(3), now64(3), 1
   FROM (SELECT number AS c FROM numbers(60)) ARRAY JOIN range(3) AS s ARRAY JOIN [-1, 0, 1] AS a`,
);
const seconds = (performance.now() - t0) / 1000;
await stores.close();
process.stdout.write(
  `${JSON.stringify({ dataDir, events: N, orders, seconds: Math.round(seconds * 10) / 10 })}\n`,
);
