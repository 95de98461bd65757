/**
 * The fractional attribution models (docs/query.md, "Attribution"): `linear`, `time_decay` (weight
 * 2^(−Δ/h), Δ the days from the touch to the conversion, h = attributionHalfLifeDays, default 7,
 * 1–90, normalized per conversion) and `position_based` (40 % first, 40 % last, 20 % shared by the
 * ones between; one touch 100 %, two 50 % each), on POST /db-mgmt/api/query-attribution and the
 * general query's attribution measures. The touches are those first/last click see: inside the
 * window (touch_time > conversion − window days AND touch_time <= conversion), identities resolved
 * one hop through merges; ties at the same instant rank by event id. A conversion without a touch is
 * `(none)` with share 1. The reference for one conversion's shares is touchShares
 * (src/query/attribution-models.ts, unit-tested in test/unit/attribution-models.test.ts).
 *
 * Output: attribution.orders to 4 decimals, revenue to the cent, each rounded by largest remainder
 * across the dimension values so that Σ orders = the counted orders (incl. `(none)`) and Σ revenue =
 * net revenue exactly, in every bucket and for the range.
 *
 * Rates (units per USD): EUR 0.8 from Apr 1, 0.9 from May 11. Range May 10–12 2026, UTC.
 *
 *   order     placed        amount → net USD / net EUR
 *   O1 alice  May 10 12:00  USD 200, refund USD 50 on May 11 → 150 / 200 × 0.8 − 50 × 0.9 = 115
 *   O2 bob    May 11 09:00  EUR 120                          → 120 / 0.9 = 133.3333 / 120
 *   O3 carol  May 11 15:00  USD 80                           → 80 / 80 × 0.9 = 72
 *   O4 dave   May 12 10:00  EUR 50, no touch at all          → 50 / 0.9 = 55.5556 / 50
 *   O5 erin   May 12 18:00  USD 60                           → 60 / 60 × 0.9 = 54
 *   5 orders; net 478.8889 → 478.89 USD, 411.00 EUR
 *
 *   touch (event id) channel / utm_campaign                 time           before the order
 *   O1  a1  paid_search (google cpc) / spring               Apr 10 12:00   30 d exactly: out at 30, in at −1
 *       a2  paid_social (facebook) / retarget, campaign_id f1  Apr 20 12:00   20 d
 *       a3  paid_search / generic                           May 3 12:00    7 d exactly: out at 7
 *       a4  paid_search / brand                             May 3 12:01    7 d − 1 min: in at 7
 *       a5  email (klaviyo) / newsletter                    May 9 12:00    1 d
 *   O2  b0  affiliate (partnerx) / summer-aff               May 1 09:00    10 d
 *       o2-tie-a  sms (attentive) / flash                   May 8 09:00    3 d  } the same instant: tie-a
 *       o2-tie-b  email (klaviyo) / (not set)               May 8 09:00    3 d  } ranks first (event id),
 *                                                                               though sent after tie-b
 *       b3  email / newsletter                              May 11 09:00   0: at the order, counts
 *       b4  paid_search / brand                             May 11 09:01   after the order: never
 *   O3  on anon-carol, merged with carol's store id after the order (one hop):
 *       c0  paid_social (tiktok) / spring                   Apr 11 16:00   30 d − 1 h: in at 30
 *       c1  paid_social (facebook) / retarget, f1           May 9 15:00    2 d
 *       c2  paid_search / brand                             May 11 03:00   12 h
 *   O5  e1  affiliate / summer-aff                          May 4 18:00    8 d: out at 7
 *
 *   In the window:  7 → O1 {a4, a5}, O2 {tie-a, tie-b, b3}, O3 {c1, c2}, O4 –, O5 –
 *                  30 → O1 {a2, a3, a4, a5}, O2 {b0, tie-a, tie-b, b3}, O3 {c0, c1, c2}, O5 {e1}
 *                  −1 → as 30, plus a1 for O1
 *
 * Worked example — O2's shares at window 7 (tie-a, tie-b 3 days back, b3 at the order):
 *   linear          1/3, 1/3, 1/3
 *   position_based  ranked tie-a, tie-b, b3 → 0.4, 0.2, 0.4 (sms 0.4, email 0.6)
 *   time_decay h=7  weights 2^(−3/7) = 0.742997, 0.742997, 2^0 = 1; sum 2.485994
 *                   → 0.298873, 0.298873, 0.402254
 *   time_decay h=1  weights 2^−3 = 0.125, 0.125, 1; sum 1.25 → 0.1, 0.1, 0.8
 *   O1 position_based: at 30 a2 0.4, a3 0.1, a4 0.1, a5 0.4; at −1 a1 0.4, a2 = a3 = a4 = 0.2/3, a5 0.4
 *
 * Worked example — linear, window 7, by channel, USD:
 *   paid_search  O1 ½ (a4) + O3 ½ (c2)    = 1        150/2 + 80/2               = 115
 *   paid_social  O3 ½ (c1)                = 0.5      80/2                       = 40
 *   email        O1 ½ (a5) + O2 ⅔ (tie-b, b3) = 1.16667  150/2 + 133.3333 × 2/3 = 163.8889
 *   sms          O2 ⅓ (tie-a)             = 0.33333  133.3333/3                 = 44.4444
 *   (none)       O4, O5                   = 2        55.5556 + 60               = 115.5556
 *   orders in 1e-4: floors 10000 + 5000 + 11666 + 3333 + 20000 = 49999 of 50000 → the last unit to
 *     the largest remainder, email (.67 over sms .33): email 1.1667, sms 0.3333, Σ 5.
 *   revenue in cents: floors 11500 + 4000 + 16388 + 4444 + 11555 = 47887 of 47889 → email (.89) and
 *     (none) (.56) get a cent, sms (.44) does not: 163.89, 115.56, 44.44; Σ 478.89 = net revenue.
 *   In EUR: paid_search 115/2 + 72/2 = 93.50, paid_social 36, email 57.5 + 80 = 137.50, sms 40,
 *     (none) 50 + 54 = 104; Σ 411.
 * Every other figure of TABLE below comes from the same arithmetic; `expectedCredit` does it in code
 * (shares from touchShares, amounts converted at the rates above, largest remainder), and the first
 * test checks that it reproduces TABLE.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type AttributionModel, touchShares } from "../../src/query/attribution-models.js";
import type { TestApp } from "../helpers/app.js";
import {
  adMetric,
  byValue,
  detail,
  event,
  expect400,
  fxRate,
  type Json,
  order,
  type Response,
  refund,
  resultsOf,
  storeCustomer,
  sums,
  total,
  touch,
} from "./query-fixtures.js";
import { type Poster, type QuerySuite, startQuerySuite } from "./query-setup.js";

// ---- The dataset as data: loaded from here, and the arithmetic of the expected figures reads it ----

interface TouchDef {
  eventId: string;
  at: string;
  /** What the service classifies the landing as (checked against any_click / first / last click). */
  channel: string;
  campaign: string;
  query: string;
}
interface OrderDef {
  id: string;
  customer: string;
  at: string;
  currency: "USD" | "EUR";
  total: number;
  refund?: { id: string; at: string; amount: number };
  /** The identity the touches are on; `merged`: linked to the customer only after the order. */
  identity: string;
  merged?: boolean;
  touches: TouchDef[];
}

const t = (
  eventId: string,
  at: string,
  channel: string,
  campaign: string,
  source: string,
  medium: string,
  extra = "",
): TouchDef => ({
  eventId,
  at,
  channel,
  campaign,
  query: `utm_source=${source}&utm_medium=${medium}${campaign === "(not set)" ? "" : `&utm_campaign=${campaign}`}${extra}`,
});

const ORDERS: OrderDef[] = [
  {
    id: "O1",
    customer: "alice",
    at: "2026-05-10T12:00:00Z",
    currency: "USD",
    total: 200,
    refund: { id: "R1", at: "2026-05-11T08:00:00Z", amount: 50 },
    identity: "anon-alice",
    touches: [
      t("a1", "2026-04-10T12:00:00Z", "paid_search", "spring", "google", "cpc"),
      t(
        "a2",
        "2026-04-20T12:00:00Z",
        "paid_social",
        "retarget",
        "facebook",
        "paid_social",
        "&campaign_id=f1",
      ),
      t("a3", "2026-05-03T12:00:00Z", "paid_search", "generic", "google", "cpc"),
      t("a4", "2026-05-03T12:01:00Z", "paid_search", "brand", "google", "cpc"),
      t("a5", "2026-05-09T12:00:00Z", "email", "newsletter", "klaviyo", "email"),
    ],
  },
  {
    id: "O2",
    customer: "bob",
    at: "2026-05-11T09:00:00Z",
    currency: "EUR",
    total: 120,
    identity: "anon-bob",
    touches: [
      t("b0", "2026-05-01T09:00:00Z", "affiliate", "summer-aff", "partnerx", "affiliate"),
      t("o2-tie-a", "2026-05-08T09:00:00Z", "sms", "flash", "attentive", "sms"),
      t("o2-tie-b", "2026-05-08T09:00:00Z", "email", "(not set)", "klaviyo", "email"),
      t("b3", "2026-05-11T09:00:00Z", "email", "newsletter", "klaviyo", "email"),
      t("b4", "2026-05-11T09:01:00Z", "paid_search", "brand", "google", "cpc"),
    ],
  },
  {
    id: "O3",
    customer: "carol",
    at: "2026-05-11T15:00:00Z",
    currency: "USD",
    total: 80,
    identity: "anon-carol",
    merged: true,
    touches: [
      t("c0", "2026-04-11T16:00:00Z", "paid_social", "spring", "tiktok", "paid_social"),
      t(
        "c1",
        "2026-05-09T15:00:00Z",
        "paid_social",
        "retarget",
        "facebook",
        "paid_social",
        "&campaign_id=f1",
      ),
      t("c2", "2026-05-11T03:00:00Z", "paid_search", "brand", "google", "cpc"),
    ],
  },
  {
    id: "O4",
    customer: "dave",
    at: "2026-05-12T10:00:00Z",
    currency: "EUR",
    total: 50,
    identity: "",
    touches: [],
  },
  {
    id: "O5",
    customer: "erin",
    at: "2026-05-12T18:00:00Z",
    currency: "USD",
    total: 60,
    identity: "anon-erin",
    touches: [t("e1", "2026-05-04T18:00:00Z", "affiliate", "summer-aff", "partnerx", "affiliate")],
  },
];
/** Sent in a later request than the rest, so ingestion order is not event id order. */
const SENT_LAST = "o2-tie-a";

const EUR_RATES: [from: string, unitsPerUsd: number][] = [
  ["2026-04-01", 0.8],
  ["2026-05-11", 0.9],
];
/** f1 (facebook campaign of a2 and c1): USD 40 on May 10 = EUR 32. */
const F1_SPEND = { date: "2026-05-10", usd: 40 };

let suite: QuerySuite;
let app: TestApp;
let post: Poster;

beforeAll(async () => {
  suite = await startQuerySuite({ scopes: ["analytics:read", "events:write"] });
  ({ app, post } = suite);
  await suite.load.fxRates(EUR_RATES.map(([d, r]) => fxRate(d, "EUR", r)));
  const touches = (pick: (t: TouchDef) => boolean) =>
    ORDERS.flatMap((o) =>
      o.touches.filter(pick).map((x) =>
        touch(o.identity, x.at, x.query, {
          eventId: x.eventId,
          // touches of customers not merged later carry the store customer id (as the storefront does)
          ...(o.merged ? {} : storeCustomer(o.customer)),
        }),
      ),
    );
  await suite.load.events(touches((x) => x.eventId !== SENT_LAST));
  await suite.load.events(touches((x) => x.eventId === SENT_LAST));
  await suite.load.orders(
    ORDERS.map((o) => order(o.id, o.at, o.currency, o.total, { customer: { id: o.customer } })),
  );
  await suite.load.refunds(
    ORDERS.flatMap((o) =>
      o.refund ? [refund(o.refund.id, o.id, o.refund.at, o.refund.amount, o.currency)] : [],
    ),
  );
  // carol's anonymous identity learns her store id after the order (a page view without campaign signals)
  await suite.load.events(
    ORDERS.filter((o) => o.merged).map((o) =>
      event("page_view", o.identity, "2026-05-12T20:00:00Z", storeCustomer(o.customer)),
    ),
  );
  await suite.load.adMetrics([
    adMetric(
      { platform: "facebook", entityId: "f1", accountId: "act-f" },
      F1_SPEND.date,
      "USD",
      F1_SPEND.usd,
      {
        updatedAt: `${F1_SPEND.date}T23:00:00Z`,
      },
    ),
  ]);
});
afterAll(() => app?.close());

const RANGE = { start: "2026-05-10", end: "2026-05-12" };
const DAYS = ["2026-05-10", "2026-05-11", "2026-05-12"];
const PATH = "/db-mgmt/api/query-attribution";
const WINDOWS = [7, 30, -1] as const;
const ALL_WINDOWS = [1, 7, 14, 30, 60, 90, -1] as const;
type Currency = "USD" | "EUR";

// ---- The arithmetic of the header, in code ----------------------------------------------------------

const DAY_MS = 86_400_000;
const ms = (iso: string) => Date.parse(iso);
const eurPerUsd = (iso: string) => {
  let rate = Number.NaN;
  for (const [from, r] of EUR_RATES) if (iso.slice(0, 10) >= from) rate = r;
  return rate;
};
/** An amount of `currency` at instant `iso`, in `target`, at that UTC day's rate. */
const convert = (amount: number, currency: Currency, iso: string, target: Currency) =>
  currency === target ? amount : currency === "USD" ? amount * eurPerUsd(iso) : amount / eurPerUsd(iso);
const netOf = (o: OrderDef, target: Currency) =>
  convert(o.total, o.currency, o.at, target) -
  (o.refund ? convert(o.refund.amount, o.currency, o.refund.at, target) : 0);

/** Largest remainder: each value floored to `scale`, the units left go to the largest remainders. */
function largestRemainder(exact: Record<string, number>, scale: number): Record<string, number> {
  const keys = Object.keys(exact);
  const units = keys.map((k) => {
    const u = exact[k]! * scale;
    return Math.abs(u - Math.round(u)) < 1e-7 ? Math.round(u) : u;
  });
  const floors = units.map(Math.floor);
  let left = Math.round(units.reduce((a, b) => a + b, 0)) - floors.reduce((a, b) => a + b, 0);
  // ties in the remainder go to the value that sorts first (docs/query.md)
  const byRemainder = keys
    .map((_, i) => i)
    .sort((a, b) => units[b]! - floors[b]! - (units[a]! - floors[a]!) || (keys[a]! < keys[b]! ? -1 : 1));
  for (const i of byRemainder) {
    if (left-- <= 0) break;
    floors[i]!++;
  }
  return Object.fromEntries(keys.map((k, i) => [k, floors[i]! / scale]));
}

interface Expectation {
  halfLife?: number;
  currency?: Currency;
  dim?: "channel" | "campaign";
  /** Only orders placed on this UTC day (one bucket of a by-day query). */
  day?: string;
  orderIds?: string[];
}

/** value → [attributed orders, attributed revenue], as the contract rounds them. */
function expectedCredit(model: AttributionModel, window: number, e: Expectation = {}) {
  const { halfLife = 7, currency = "USD", dim = "channel" } = e;
  const orders: Record<string, number> = {};
  const revenue: Record<string, number> = {};
  const add = (k: string, share: number, net: number) => {
    orders[k] = (orders[k] ?? 0) + share;
    revenue[k] = (revenue[k] ?? 0) + share * net;
  };
  for (const o of ORDERS) {
    if (e.day && o.at.slice(0, 10) !== e.day) continue;
    if (e.orderIds && !e.orderIds.includes(o.id)) continue;
    const conv = ms(o.at);
    const inWindow = o.touches.filter(
      (x) => ms(x.at) <= conv && (window < 0 || ms(x.at) > conv - window * DAY_MS),
    );
    const net = netOf(o, currency);
    if (inWindow.length === 0) add("(none)", 1, net);
    const shares = touchShares(
      model,
      inWindow.map((x) => ({ time: ms(x.at), eventId: x.eventId })),
      halfLife,
    );
    inWindow.forEach((x, i) => {
      add(x[dim], shares[i]!, net);
    });
  }
  const o = largestRemainder(orders, 10_000);
  const r = largestRemainder(revenue, 100);
  return Object.fromEntries(Object.keys(o).map((k) => [k, [o[k]!, r[k]!]])) as Record<
    string,
    [number, number]
  >;
}

// ---- The figures, by channel: [orders, revenue USD, revenue EUR] ------------------------------------

type Row = [orders: number, usd: number, eur: number];
const TABLE: Record<string, Record<number, Record<string, Row>>> = {
  linear: {
    7: {
      paid_search: [1, 115, 93.5],
      paid_social: [0.5, 40, 36],
      email: [1.1667, 163.89, 137.5],
      sms: [0.3333, 44.44, 40],
      "(none)": [2, 115.56, 104],
    },
    // O1 ¼ each of a2..a5, O2 ¼ each of b0, tie-a, tie-b, b3, O3 ⅓ each, O5 e1
    30: {
      paid_search: [0.8333, 101.67, 81.5],
      paid_social: [0.9167, 90.83, 76.75],
      email: [0.75, 104.17, 88.75],
      sms: [0.25, 33.33, 30],
      affiliate: [1.25, 93.33, 84],
      "(none)": [1, 55.56, 50],
    },
    // O1 ⅕ each of a1..a5: paid_search ⅗ (a1, a3, a4)
    [-1]: {
      paid_search: [0.9333, 116.67, 93],
      paid_social: [0.8667, 83.33, 71],
      email: [0.7, 96.67, 83],
      sms: [0.25, 33.33, 30],
      affiliate: [1.25, 93.33, 84],
      "(none)": [1, 55.56, 50],
    },
  },
  time_decay: {
    // O1: a4 Δ 6.9993 d, a5 Δ 1 d → 0.355704, 0.644296; O2 0.298873 ×2, 0.402254; O3: c1 Δ 2, c2 Δ 0.5
    7: {
      paid_search: [0.8928, 96.32, 79.57],
      paid_social: [0.4629, 37.03, 33.33],
      email: [1.3454, 190.13, 158.23],
      sms: [0.2989, 39.85, 35.87],
      "(none)": [2, 115.56, 104],
    },
    30: {
      paid_search: [1.0112, 115.15, 93.85],
      paid_social: [0.5456, 48.38, 42.19],
      email: [1.0532, 147.8, 124.16],
      sms: [0.26, 34.67, 31.2],
      affiliate: [1.13, 77.33, 69.6],
      "(none)": [1, 55.56, 50],
    },
    [-1]: {
      paid_search: [1.0237, 117.02, 95.29],
      paid_social: [0.544, 48.13, 42],
      email: [1.0423, 146.18, 122.91],
      sms: [0.26, 34.67, 31.2],
      affiliate: [1.13, 77.33, 69.6],
      "(none)": [1, 55.56, 50],
    },
  },
  time_decay_h1: {
    // O2 at 7: 0.1, 0.1, 0.8 (the worked example)
    7: {
      paid_search: [0.7542, 61.41, 54.96],
      paid_social: [0.2612, 20.9, 18.81],
      email: [1.8846, 267.69, 221.23],
      sms: [0.1, 13.33, 12],
      "(none)": [2, 115.56, 104],
    },
    30: {
      paid_search: [0.7691, 63.65, 56.68],
      paid_social: [0.2612, 20.9, 18.81],
      email: [1.869, 265.36, 219.43],
      sms: [0.0999, 13.32, 11.99],
      affiliate: [1.0008, 60.1, 54.09],
      "(none)": [1, 55.56, 50],
    },
    // a1 (30 d back at h = 1) weighs 2^−30 of a5's weight: nothing shows at 4 decimals
    [-1]: {
      paid_search: [0.7691, 63.65, 56.68],
      paid_social: [0.2612, 20.9, 18.81],
      email: [1.869, 265.36, 219.43],
      sms: [0.0999, 13.32, 11.99],
      affiliate: [1.0008, 60.1, 54.09],
      "(none)": [1, 55.56, 50],
    },
  },
  position_based: {
    // O1 ½ ½, O2 tie-a 0.4, tie-b 0.2, b3 0.4, O3 ½ ½
    7: {
      paid_search: [1, 115, 93.5],
      paid_social: [0.5, 40, 36],
      email: [1.1, 155, 129.5],
      sms: [0.4, 53.33, 48],
      "(none)": [2, 115.56, 104],
    },
    // O1 a2 0.4, a3 0.1, a4 0.1, a5 0.4; O2 b0 0.4, ties 0.1 each, b3 0.4; O3 c0 0.4, c1 0.2, c2 0.4
    30: {
      paid_search: [0.6, 62, 51.8],
      paid_social: [1, 108, 89.2],
      email: [0.9, 126.67, 106],
      sms: [0.1, 13.33, 12],
      affiliate: [1.4, 113.33, 102],
      "(none)": [1, 55.56, 50],
    },
    // O1 a1 0.4, a2..a4 0.0667 each, a5 0.4: paid_search 0.5333 × 150 + 0.4 × 80 = 112
    [-1]: {
      paid_search: [0.9333, 112, 90.13],
      paid_social: [0.6667, 58, 50.87],
      email: [0.9, 126.67, 106],
      sms: [0.1, 13.33, 12],
      affiliate: [1.4, 113.33, 102],
      "(none)": [1, 55.56, 50],
    },
  },
};

/** The table's model keys → request fields. */
const MODELS: [key: string, model: AttributionModel, extra: Json, halfLife: number][] = [
  ["linear", "linear", {}, 7],
  ["time_decay", "time_decay", {}, 7], // the default half-life
  ["time_decay_h1", "time_decay", { attributionHalfLifeDays: 1 }, 1],
  ["position_based", "position_based", {}, 7],
];

const column = (rows: Record<string, Row>, c: Currency) =>
  Object.fromEntries(Object.entries(rows).map(([k, [n, usd, eur]]) => [k, [n, c === "USD" ? usd : eur]]));

// ---- Requests -------------------------------------------------------------------------------------

function attribute(model: string, window: number, extra: Json = {}, headers?: Record<string, string>) {
  return post(
    {
      dimension: "attribution.channel",
      dateRange: RANGE,
      timezone: "UTC",
      attributionModel: model,
      attributionWindow: window,
      ...extra,
    },
    { path: PATH, ...(headers ? { headers } : {}) },
  );
}

/** value → [attributed orders, attributed revenue] of an answer. */
function pairs(res: Response) {
  const orders = sums(res, "attribution.orders");
  const revenue = sums(res, "attribution.revenue");
  return Object.fromEntries(Object.keys(orders).map((k) => [k, [orders[k], revenue[k]]]));
}

async function credit(model: string, window: number, extra: Json = {}) {
  return pairs(await attribute(model, window, extra));
}

// ---- Tests ----------------------------------------------------------------------------------------

describe("the expected figures", () => {
  it("TABLE is the header's arithmetic: shares from touchShares, per-day rates, largest remainder", () => {
    for (const [key, model, , halfLife] of MODELS) {
      for (const w of WINDOWS) {
        for (const c of ["USD", "EUR"] as const) {
          expect(expectedCredit(model, w, { halfLife, currency: c }), `${key} ${w} ${c}`).toEqual(
            column(TABLE[key]![w]!, c),
          );
        }
      }
    }
    // the worked example's shares of O2 at window 7
    const o2 = ORDERS[1]!.touches.slice(1, 4).map((x) => ({ time: ms(x.at), eventId: x.eventId }));
    const rounded = (xs: number[]) => xs.map((x) => Math.round(x * 1e6) / 1e6);
    expect(rounded(touchShares("linear", o2))).toEqual([0.333333, 0.333333, 0.333333]);
    expect(rounded(touchShares("position_based", o2))).toEqual([0.4, 0.2, 0.4]);
    expect(rounded(touchShares("time_decay", o2, 7))).toEqual([0.298873, 0.298873, 0.402254]);
    expect(rounded(touchShares("time_decay", o2, 1))).toEqual([0.1, 0.1, 0.8]);
    // the net amounts of the header
    expect(ORDERS.map((o) => Math.round(netOf(o, "USD") * 1e4) / 1e4)).toEqual([
      150, 133.3333, 80, 55.5556, 60,
    ]);
    expect(ORDERS.map((o) => Math.round(netOf(o, "EUR") * 1e4) / 1e4)).toEqual([115, 120, 72, 50, 54]);
  });
});

describe("the fixture as the single-touch models see it (holds before the fractional models exist)", () => {
  it("any_click, unlimited window: the channels each order touched", async () => {
    // paid_search O1 O3, paid_social O1 O3, email O1 O2, sms O2, affiliate O2 O5; O4 none
    expect(await credit("any_click", -1)).toEqual({
      paid_search: [2, 230],
      paid_social: [2, 230],
      email: [2, 283.33],
      sms: [1, 133.33],
      affiliate: [2, 193.33],
      "(none)": [1, 55.56],
    });
  });

  it("first and last click at 7 days by campaign: the window edges, the tie and the merge", async () => {
    const byCampaign = { dimension: "attribution.campaign" };
    // first: O1 a4 brand (a3 exactly 7 d back is out), O2 tie-a flash (event id), O3 c1 retarget (merged)
    expect(await credit("first_click", 7, byCampaign)).toEqual({
      brand: [1, 150],
      flash: [1, 133.33],
      retarget: [1, 80],
      "(none)": [2, 115.56],
    });
    // last: O1 a5, O2 b3 (at the order; b4 after it does not count), O3 c2
    expect(await credit("last_click", 7, byCampaign)).toEqual({
      newsletter: [2, 283.33],
      brand: [1, 80],
      "(none)": [2, 115.56],
    });
    // first at 30: O1 a2 (a1 exactly 30 d back is out), O2 b0, O3 c0 (30 d − 1 h), O5 e1
    expect(await credit("first_click", 30, byCampaign)).toEqual({
      retarget: [1, 150],
      "summer-aff": [2, 193.33],
      spring: [1, 80],
      "(none)": [1, 55.56],
    });
  });
});

describe("one order's shares (orders.order_id filter, by campaign)", () => {
  const only = (id: string) => ({
    dimension: "attribution.campaign",
    filters: { field: "orders.order_id", op: "equals", value: id },
  });

  it("O1, linear: 2 touches at 7 (a3 exactly 7 days back is out), 4 at 30, 5 unlimited", async () => {
    expect(await credit("linear", 7, only("O1"))).toEqual({ brand: [0.5, 75], newsletter: [0.5, 75] });
    expect(await credit("linear", 30, only("O1"))).toEqual({
      retarget: [0.25, 37.5],
      generic: [0.25, 37.5],
      brand: [0.25, 37.5],
      newsletter: [0.25, 37.5],
    });
    expect(await credit("linear", -1, only("O1"))).toEqual({
      spring: [0.2, 30],
      retarget: [0.2, 30],
      generic: [0.2, 30],
      brand: [0.2, 30],
      newsletter: [0.2, 30],
    });
  });

  it("O1, position_based: 40 / 10 / 10 / 40 at 30, 40 / 6.67 × 3 / 40 unlimited", async () => {
    expect(await credit("position_based", 30, only("O1"))).toEqual({
      retarget: [0.4, 60],
      generic: [0.1, 15],
      brand: [0.1, 15],
      newsletter: [0.4, 60],
    });
    // 0.2/3 = 0.06667 of 150 = 10 each; orders: 3 × 666.67 units, floors 666 × 3 + 4000 × 2 = 9998 →
    // two units for three equal remainders: ties go to the values that sort first (brand, generic)
    expect(await credit("position_based", -1, only("O1"))).toEqual({
      spring: [0.4, 60],
      retarget: [0.0666, 10],
      generic: [0.0667, 10],
      brand: [0.0667, 10],
      newsletter: [0.4, 60],
    });
  });

  it("O2, position_based at 7: the tie at the same instant goes to the smaller event id", async () => {
    // tie-a (flash) first 40 %, tie-b ((not set)) 20 %, b3 (newsletter) last 40 %; of EUR 120 = USD 133.3333:
    // 53.3333, 26.6667, 53.3333 → cents 5333 + 2666 + 5333 = 13332 of 13333: the cent to (not set)
    expect(await credit("position_based", 7, only("O2"))).toEqual({
      flash: [0.4, 53.33],
      "(not set)": [0.2, 26.67],
      newsletter: [0.4, 53.33],
    });
    expect(await credit("position_based", 7, { ...only("O2"), currency: "EUR" })).toEqual({
      flash: [0.4, 48],
      "(not set)": [0.2, 24],
      newsletter: [0.4, 48],
    });
  });

  it("O2, time_decay: h = 1 gives 0.1, 0.1, 0.8; the default h = 7 gives 0.2989, 0.2989, 0.4023", async () => {
    expect(
      await credit("time_decay", 7, { ...only("O2"), attributionHalfLifeDays: 1, currency: "EUR" }),
    ).toEqual({ flash: [0.1, 12], "(not set)": [0.1, 12], newsletter: [0.8, 96] });
    // USD: 13.3333, 13.3333, 106.6667 → the missing cent to newsletter
    expect(await credit("time_decay", 7, { ...only("O2"), attributionHalfLifeDays: 1 })).toEqual({
      flash: [0.1, 13.33],
      "(not set)": [0.1, 13.33],
      newsletter: [0.8, 106.67],
    });
    // h = 7 (USD): 0.298873 × 133.3333 = 39.8498 twice, 0.402254 × 133.3333 = 53.6338 → cents floors
    // 3984 + 3984 + 5363 = 13331 of 13333: the two .98 get a cent. Orders: 2988.73 units twice and
    // 4022.54 → floors 9998: the two .73 get a unit.
    expect(await credit("time_decay", 7, only("O2"))).toEqual({
      flash: [0.2989, 39.85],
      "(not set)": [0.2989, 39.85],
      newsletter: [0.4022, 53.63],
    });
  });

  it("O3 through the merge, position_based at 30: c0 (30 d − 1 h back) counts", async () => {
    expect(await credit("position_based", 30, only("O3"))).toEqual({
      spring: [0.4, 32],
      retarget: [0.2, 16],
      brand: [0.4, 32],
    });
    expect(await credit("position_based", 7, only("O3"))).toEqual({ retarget: [0.5, 40], brand: [0.5, 40] });
  });

  it("O4 (no touch) and O5 (its touch 8 days back) are (none) with share 1", async () => {
    for (const model of ["linear", "time_decay", "position_based"]) {
      expect(await credit(model, 7, only("O4")), model).toEqual({ "(none)": [1, 55.56] });
      expect(await credit(model, 7, only("O5")), model).toEqual({ "(none)": [1, 60] });
      expect(await credit(model, 30, only("O5")), model).toEqual({ "summer-aff": [1, 60] });
    }
  });
});

describe("every model and window by attribution.channel", () => {
  const cases = MODELS.flatMap(([key, model, extra]) =>
    WINDOWS.flatMap((w) =>
      (["USD", "EUR"] as const).map((c) => [`${key}, window ${w}, ${c}`, key, model, extra, w, c] as const),
    ),
  );
  it.each(cases)("%s", async (_name, key, model, extra, window, currency) => {
    expect(await credit(model, window, { ...extra, currency })).toEqual(
      column(TABLE[key]![window]!, currency),
    );
  });

  it("attributionHalfLifeDays 7 is the default", async () => {
    for (const w of WINDOWS) {
      expect(await credit("time_decay", w, { attributionHalfLifeDays: 7 })).toEqual(
        column(TABLE.time_decay![w]!, "USD"),
      );
    }
  });

  it("the largest half-life, 90, is accepted (1 is in TABLE)", async () => {
    // O2 at 7: weights 2^(−3/90) = 0.977160 twice and 1 → 0.330756, 0.330756, 0.338487
    const res = await credit("time_decay", 7, { attributionHalfLifeDays: 90 });
    expect(res).toEqual({
      paid_search: [0.9913, 113.5],
      paid_social: [0.4971, 39.77],
      email: [1.1808, 165.96],
      sms: [0.3308, 44.1],
      "(none)": [2, 115.56],
    });
    expect(res).toEqual(expectedCredit("time_decay", 7, { halfLife: 90 }));
  });
});

describe("by attribution.campaign", () => {
  it("position_based, window 7", async () => {
    // O1 brand ½, newsletter ½; O2 flash 0.4, (not set) 0.2, newsletter 0.4; O3 retarget ½, brand ½
    // USD: brand 75 + 40 = 115; newsletter 75 + 53.3333 = 128.3333; flash 53.3333; (not set) 26.6667;
    // retarget 40; (none) 115.5556 → cents floors 47887 of 47889: (not set) (.67) and (none) (.56)
    expect(await credit("position_based", 7, { dimension: "attribution.campaign" })).toEqual({
      brand: [1, 115],
      newsletter: [0.9, 128.33],
      flash: [0.4, 53.33],
      "(not set)": [0.2, 26.67],
      retarget: [0.5, 40],
      "(none)": [2, 115.56],
    });
    // EUR: brand 57.5 + 36, newsletter 57.5 + 48, flash 48, (not set) 24, retarget 36, (none) 104
    expect(await credit("position_based", 7, { dimension: "attribution.campaign", currency: "EUR" })).toEqual(
      {
        brand: [1, 93.5],
        newsletter: [0.9, 105.5],
        flash: [0.4, 48],
        "(not set)": [0.2, 24],
        retarget: [0.5, 36],
        "(none)": [2, 104],
      },
    );
    expect(await credit("position_based", 7, { dimension: "attribution.campaign" })).toEqual(
      expectedCredit("position_based", 7, { dim: "campaign" }),
    );
  });
});

describe("spend, ROAS and CPA by attribution.campaign_id", () => {
  const row = async (window: number, currency: Currency) => {
    const res = byValue(
      await attribute("position_based", window, {
        dimension: "attribution.campaign_id",
        currency,
        measures: [
          "attribution.orders",
          "attribution.revenue",
          "ads.spend",
          "attribution.roas",
          "attribution.cpa",
        ],
      }),
    );
    expect(res.f1, "campaign f1").toBeDefined();
    return [
      "attribution.orders",
      "attribution.revenue",
      "ads.spend",
      "attribution.roas",
      "attribution.cpa",
    ].map((m) => detail(res.f1!, m).primarySum);
  };

  it("f1 (a2, c1): fractional orders and revenue against its spend", async () => {
    // window 7: c1 ½ of O3 → 0.5, 40; spend 40 → ROAS 1, CPA 40 / 0.5 = 80
    expect(await row(7, "USD")).toEqual([0.5, 40, 40, 1, 80]);
    // window 30: a2 0.4 of O1 (60) + c1 0.2 of O3 (16) → 0.6, 76; ROAS 1.9, CPA 66.67
    expect(await row(30, "USD")).toEqual([0.6, 76, 40, 1.9, 66.67]);
    // EUR: spend 40 × 0.8 = 32; window 7: 0.5 × 72 = 36 → ROAS 1.125, CPA 64
    expect(await row(7, "EUR")).toEqual([0.5, 36, 32, 1.125, 64]);
    // window 30: 0.4 × 115 + 0.2 × 72 = 60.4 → ROAS 1.8875, CPA 32 / 0.6 = 53.33
    expect(await row(30, "EUR")).toEqual([0.6, 60.4, 32, 1.8875, 53.33]);
  });
});

describe("the general query's attribution measures", () => {
  it("dimensions [attribution.channel], granularity day, linear 30: each bucket and the range", async () => {
    // May 10: O1 ¼ each of a2 (paid_social), a3, a4 (paid_search), a5 (email), 150 → 37.5 a touch
    // May 11: O2 ¼ each of b0, tie-a, tie-b, b3 (133.3333 → 33.3333 each); O3 ⅓ each of c0, c1, c2 (26.6667)
    //   paid_social ⅔ 53.3333, paid_search ⅓ 26.6667, email ½ 66.6667, affiliate ¼ 33.3333, sms ¼ 33.3333
    //   → cents floors 5333 + 2666 + 6666 + 3333 + 3333 = 21331 of 21333: email and paid_search (.67)
    // May 12: O4 (none) 55.5556, O5 affiliate 60
    const res = await post({
      measures: ["attribution.orders", "attribution.revenue"],
      dimensions: ["attribution.channel"],
      dateRange: RANGE,
      granularity: "day",
      timezone: "UTC",
      attributionModel: "linear",
      attributionWindow: 30,
    });
    const results = byValue(res);
    const days = (v: string, m: string) => results[v]!.data.primary.map((r) => r[m]);
    const expected: Record<string, [number[], number[]]> = {
      paid_search: [
        [0.5, 0.3333, 0],
        [75, 26.67, 0],
      ],
      paid_social: [
        [0.25, 0.6667, 0],
        [37.5, 53.33, 0],
      ],
      email: [
        [0.25, 0.5, 0],
        [37.5, 66.67, 0],
      ],
      sms: [
        [0, 0.25, 0],
        [0, 33.33, 0],
      ],
      affiliate: [
        [0, 0.25, 1],
        [0, 33.33, 60],
      ],
      "(none)": [
        [0, 0, 1],
        [0, 0, 55.56],
      ],
    };
    expect(Object.keys(results).sort()).toEqual(Object.keys(expected).sort());
    for (const [v, [orders, revenue]] of Object.entries(expected)) {
      expect(results[v]!.data.primary.map((r) => r.dt)).toEqual(DAYS);
      expect(days(v, "attribution.orders"), `${v} orders`).toEqual(orders);
      expect(days(v, "attribution.revenue"), `${v} revenue`).toEqual(revenue);
    }
    // the buckets agree with the arithmetic, and the range totals are TABLE's
    for (const [i, day] of DAYS.entries()) {
      const bucket = Object.fromEntries(
        Object.entries(expected)
          .filter(([, [o]]) => o[i] !== 0)
          .map(([v, [o, r]]) => [v, [o[i], r[i]]]),
      );
      expect(expectedCredit("linear", 30, { day }), day).toEqual(bucket);
    }
    expect(pairs(res)).toEqual(column(TABLE.linear![30]!, "USD"));
  });

  it("without an attribution dimension: orders with a touch in the window, each counted once", async () => {
    // window 30: O1, O2, O3, O5 → 4; 150 + 133.3333 + 80 + 60 = 423.3333; AOV 105.83
    // window 7: O1, O2, O3 → 3; 363.3333; AOV 121.11
    for (const model of ["linear", "time_decay", "position_based"]) {
      for (const [window, n, revenue, aov] of [
        [30, 4, 423.33, 105.83],
        [7, 3, 363.33, 121.11],
      ] as const) {
        const res = await post({
          measures: ["attribution.orders", "attribution.revenue", "attribution.aov"],
          dateRange: RANGE,
          granularity: "none",
          timezone: "UTC",
          attributionModel: model,
          attributionWindow: window,
        });
        const at = `${model} ${window}`;
        expect(total(res, "attribution.orders"), at).toBe(n);
        expect(total(res, "attribution.revenue"), at).toBe(revenue);
        expect(total(res, "attribution.aov"), at).toBe(aov);
      }
    }
  });
});

describe("reconciliation: every bucket and the range, every window, both currencies", () => {
  it("Σ attribution.orders = orders.count and Σ attribution.revenue = orders.net_revenue, exactly", async () => {
    const settings = { refundDateAttribution: "order_date" };
    for (const currency of ["USD", "EUR"] as const) {
      const general = await post({
        measures: ["orders.count", "orders.net_revenue"],
        dateRange: RANGE,
        granularity: "day",
        timezone: "UTC",
        currency,
        orderSettings: settings,
      });
      const [g] = resultsOf(general);
      const count = detail(g!, "orders.count").primarySum!;
      const net = detail(g!, "orders.net_revenue").primarySum!;
      expect(count).toBe(5);
      expect(net).toBe(currency === "USD" ? 478.89 : 411);
      const perDay = g!.data.primary.map((r) => [
        r["orders.count"] as number,
        r["orders.net_revenue"] as number,
      ]);
      expect(perDay).toEqual(
        currency === "USD"
          ? [
              [1, 150],
              [2, 213.33],
              [2, 115.56],
            ]
          : [
              [1, 115],
              [2, 192],
              [2, 104],
            ],
      );
      for (const [, model, extra] of MODELS) {
        for (const window of ALL_WINDOWS) {
          const at = `${currency} ${model} ${JSON.stringify(extra)} ${window}`;
          const res = await attribute(model, window, {
            ...extra,
            currency,
            granularity: "day",
            orderSettings: settings,
          });
          const results = resultsOf(res);
          const units = (x: unknown, scale: number) => Math.round((x as number) * scale);
          const totalOf = (m: string, scale: number) =>
            results.reduce((s, r) => s + units(detail(r, m).primarySum, scale), 0);
          expect(totalOf("attribution.orders", 1e4), at).toBe(count * 1e4);
          expect(totalOf("attribution.revenue", 100), at).toBe(Math.round(net * 100));
          for (const [i, [n, v]] of perDay.entries()) {
            const bucket = (m: string, scale: number) =>
              results.reduce((s, r) => s + units(r.data.primary[i]![m], scale), 0);
            expect(bucket("attribution.orders", 1e4), `${at} day ${i}`).toBe(n! * 1e4);
            expect(bucket("attribution.revenue", 100), `${at} day ${i}`).toBe(Math.round(v! * 100));
          }
        }
      }
    }
  });

  it("a day whose net revenue is an exact half cent: the rows add up to it rounded half away from zero", async () => {
    // Its own pixel; EUR 0.8 per USD before May 11: EUR 0.18 → 0.225 USD, EUR 123.46 → 154.325 USD.
    // orders.net_revenue rounds them half away from zero (0.23, 154.33; range 154.55); the attributed
    // rows — here one (none) row per day, no touches — must add up to the same figures.
    const { post: post2, load } = await suite.pixel();
    await load.orders([
      order("H1", "2026-04-20T12:00:00Z", "EUR", 0.18),
      order("H2", "2026-04-21T12:00:00Z", "EUR", 123.46),
    ]);
    const range = {
      dateRange: { start: "2026-04-20", end: "2026-04-21" },
      timezone: "UTC",
      granularity: "day",
    };
    const [g] = resultsOf(await post2({ ...range, measures: ["orders.net_revenue"] }));
    expect(g!.data.primary.map((r) => r["orders.net_revenue"])).toEqual([0.23, 154.33]);
    expect(detail(g!, "orders.net_revenue").primarySum).toBe(154.55);
    for (const model of ["first_click", "linear", "time_decay", "position_based"]) {
      const res = await post2(
        { ...range, dimension: "attribution.channel", attributionModel: model, attributionWindow: 30 },
        { path: PATH },
      );
      const none = byValue(res)["(none)"]!;
      expect(
        none.data.primary.map((r) => r["attribution.revenue"]),
        model,
      ).toEqual([0.23, 154.33]);
      expect(detail(none, "attribution.revenue").primarySum, model).toBe(154.55);
    }
  });

  it("any_click is the exception: every touched value is credited the whole order", async () => {
    // linear 30 spreads O2 over affiliate, sms, email; any_click gives each of them the whole of O2
    const any = await credit("any_click", 30);
    expect(any.sms).toEqual([1, 133.33]);
    expect(any.affiliate).toEqual([2, 193.33]);
    expect(Object.values(any).reduce((s, [n]) => s + n!, 0)).toBeGreaterThan(5);
  });
});

describe("the derived tables answer as raw touches do", () => {
  it("after a refresh, every fractional model and window gives the same body with and without ?derived=false", async () => {
    await app.services.derivedWorker.runOnce(0);
    const fresh = { "cache-control": "no-cache" };
    for (const [key, model, extra] of MODELS) {
      for (const window of WINDOWS) {
        const body = {
          dimension: "attribution.channel",
          dateRange: RANGE,
          timezone: "UTC",
          currency: "EUR",
          attributionModel: model,
          attributionWindow: window,
          ...extra,
        };
        const derived = await post(body, { path: PATH, headers: fresh });
        const raw = await post(body, { path: `${PATH}?derived=false`, headers: fresh });
        const at = `${model} ${JSON.stringify(extra)} ${window}`;
        expect(derived.status, derived.text).toBe(200);
        expect(derived.body, at).toEqual(raw.body);
        expect(pairs(derived), at).toEqual(column(TABLE[key]![window]!, "EUR"));
      }
    }
  });
});

describe("validation", () => {
  it("attributionHalfLifeDays outside 1–90 is a 400 naming it, on both endpoints", async () => {
    for (const h of [0, 91]) {
      expect400(await attribute("time_decay", 7, { attributionHalfLifeDays: h }), "attributionHalfLifeDays");
      expect400(
        await post({
          measures: ["attribution.orders"],
          dateRange: RANGE,
          attributionModel: "time_decay",
          attributionWindow: 7,
          attributionHalfLifeDays: h,
        }),
        "attributionHalfLifeDays",
      );
    }
  });

  it("an unknown model is a 400 naming attributionModel", async () => {
    expect400(await attribute("shapley", 7), "attributionModel");
    expect400(
      await post({ measures: ["attribution.orders"], dateRange: RANGE, attributionModel: "shapley" }),
      "attributionModel",
    );
  });
});
