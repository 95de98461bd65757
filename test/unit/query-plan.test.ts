/**
 * The query planner (src/query/plan.ts) without any store: pure (the same request and environment
 * give the same plan, inputs untouched), the exact SQL and parameters of one small plan, every
 * request value bound as a `{pN:Type}` parameter (the SQL text depends on the query's shape only,
 * never on its values), and identifiers only from the catalog.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DEFAULT_ORDER_SETTINGS } from "../../src/accounts/schemas.js";
import { ValidationError } from "../../src/errors.js";
import { FIELD_BY_NAME, FIELDS, OPERATORS_BY_TYPE } from "../../src/query/filters/fields.js";
import type { Filter } from "../../src/query/filters/schema.js";
import { MEASURES } from "../../src/query/measures.js";
import { planAttributionQuery, planCohorts, planGeneralQuery, type QueryPlan } from "../../src/query/plan.js";
import { type QueryEnvironment, resolveCohorts } from "../../src/query/resolve.js";
import { attributionQuerySchema, cohortQuerySchema, generalQuerySchema } from "../../src/query/schemas.js";
import { creditShapeKey, parseCreditShape } from "../../src/query/sources/credit-cells.js";
import { wholeHourOffsets } from "../../src/query/time.js";

const ENV: QueryEnvironment = {
  accountTimezone: "Europe/Berlin",
  storedOrderSettings: DEFAULT_ORDER_SETTINGS,
  now: new Date("2026-03-15T12:00:00Z"),
};

const general = (body: Record<string, unknown>) => generalQuerySchema.parse({ pixelId: "px_1", ...body });
const attribution = (body: Record<string, unknown>) =>
  attributionQuerySchema.parse({ pixelId: "px_1", ...body });

function deepFreeze<T>(o: T): T {
  if (o && typeof o === "object" && !Object.isFrozen(o)) {
    Object.freeze(o);
    for (const v of Object.values(o)) deepFreeze(v);
  }
  return o;
}

const PLACEHOLDER = /\{(p\d+|rates_from):([^}]+)\}/g;
/** The SQL text of every statement: the same for two requests of the same shape. */
const shapeOf = (plan: QueryPlan) => plan.statements.map((s) => s.sql);

const RICH = {
  measures: ["orders.count", "orders.net_revenue", "customers.new"],
  dimensions: ["orders.country"],
  dateRange: { start: "7daysAgo", end: "yesterday" },
  compareDateRange: { start: "2026-02-01", end: "2026-02-07" },
  granularity: "week",
  timezone: "America/New_York",
  currency: "EUR",
  filters: {
    and: [
      { field: "orders.tags", op: "contains", value: "vip" },
      { not: { field: "orders.total_price", op: "between", value: [10, 20] } },
    ],
  },
  orderSettings: { countPendingOrders: true, refundDateAttribution: "order_date" },
};

describe("planGeneralQuery is pure", () => {
  it("the same request and environment give the same plan, without touching either", () => {
    const q = deepFreeze(general(RICH));
    const env = deepFreeze({ ...ENV, now: new Date(ENV.now) });
    const a = planGeneralQuery(q, env);
    const b = planGeneralQuery(q, env);
    expect(JSON.stringify(a)).toBe(JSON.stringify(b));
    expect(a).toEqual(b);
  });

  it("depends on the environment only through what it says: timezone, stored settings, now", () => {
    const q = general({ ...RICH, timezone: undefined });
    const berlin = planGeneralQuery(q, ENV);
    expect(berlin.timezone).toBe("Europe/Berlin");
    // relative dates resolve at `now` in the query timezone
    expect([berlin.primary.range.startDate, berlin.primary.range.endDate]).toEqual([
      "2026-03-08",
      "2026-03-14",
    ]);
    const later = planGeneralQuery(q, { ...ENV, now: new Date("2026-03-16T12:00:00Z") });
    expect(later.primary.range.startDate).toBe("2026-03-09");
    // stored settings merge under the request's
    const stored = planGeneralQuery(
      general({ measures: ["orders.count"], dateRange: RICH.compareDateRange }),
      {
        ...ENV,
        storedOrderSettings: { ...DEFAULT_ORDER_SETTINGS, countVoidedOrders: true },
      },
    );
    expect(stored.statements[0]!.sql).not.toContain("'voided'");
    expect(stored.statements[0]!.sql).toContain("'pending'");
  });

  it("the plan is plain data", () => {
    const plan = planGeneralQuery(general(RICH), ENV);
    const round = JSON.parse(JSON.stringify(plan)) as QueryPlan;
    expect(round.statements).toEqual(plan.statements);
    for (const s of plan.statements) {
      for (const v of Object.values(s.params)) expect(v instanceof Date, String(v)).toBe(false);
    }
  });
});

describe("exact SQL and parameters of one small plan", () => {
  it("orders.count by day over two UTC days, filtered by country", () => {
    const plan = planGeneralQuery(
      general({
        measures: ["orders.count"],
        dateRange: { start: "2026-03-01", end: "2026-03-02" },
        timezone: "UTC",
        filters: { field: "orders.country", op: "equals", value: "US" },
      }),
      ENV,
    );
    expect(plan.primary.buckets).toEqual([
      { key: 1772323200, dt: "2026-03-01", start: "2026-03-01T00:00:00Z", end: "2026-03-02T00:00:00Z" },
      { key: 1772409600, dt: "2026-03-02", start: "2026-03-02T00:00:00Z", end: "2026-03-03T00:00:00Z" },
    ]);
    expect(plan.statements).toHaveLength(1);
    const [s] = plan.statements;
    expect(s!.source).toBe("orders");
    expect(s!.period).toBe("primary");
    // the filter is compiled first, then the source's own values: pixel, timezone, currency, range
    expect(s!.params).toEqual({
      p0: "US",
      p1: "px_1",
      p2: "UTC",
      p3: "USD",
      p4: "2026-03-01 00:00:00.000",
      p5: "2026-03-03 00:00:00.000",
      p6: "2026-03-01",
      p7: "2026-03-02",
    });
    expect(s!.sql).toMatchInlineSnapshot(`
      "WITH co AS (
        SELECT o.*, if(o.customer_id != '', concat('c:', o.customer_id), if(o.customer_email_hash != '', concat('e:', o.customer_email_hash), concat('o:', o.order_id))) AS customer_key, toUInt64(0) AS customer_order_number, false AS is_returning
        FROM (SELECT * FROM orders FINAL WHERE pixel_id = {p1:String} AND created_at >= {p4:DateTime64(3, 'UTC')} AND created_at < {p5:DateTime64(3, 'UTC')}) AS o
        WHERE o.financial_status != 'pending' AND o.financial_status != 'voided'
      )
      SELECT toUnixTimestamp(toStartOfDay(r.ts, {p2:String})) AS bucket,
        toFloat64(count()) AS orders_count,
        '' AS fx_missing,
        grouping(bucket) AS is_total
      FROM (SELECT o.created_at AS ts, o.currency AS cur, toDate(o.created_at) AS fx_day, toUInt8(1) AS fx_k,
        o.total_price, o.subtotal_price, o.total_discounts, o.total_shipping, o.total_tax, o.customer_key,
        o.customer_order_number
      FROM co AS o
      WHERE o.created_at >= {p4:DateTime64(3, 'UTC')} AND o.created_at < {p5:DateTime64(3, 'UTC')} AND (o.country = {p0:String})) AS r
      GROUP BY GROUPING SETS ((bucket), ())"
    `);
  });
});

describe("every value is bound", () => {
  const anyText = fc.oneof(
    fc.string({ minLength: 1, maxLength: 12 }),
    fc.constantFrom("'", "\\", "'; DROP TABLE orders; --", "{p0:String}", "`x`", "%s", "$1", "\u0000x"),
  );

  /** A filter of the orders/customers families with random values, one condition per field type. */
  const filterOf = (s: string, n: number): Filter => ({
    and: [
      { field: "orders.country", op: "equals", value: s },
      { field: "orders.tags", op: "in", value: [s, `${s}2`] },
      { not: { field: "orders.source_name", op: "starts_with", value: s } },
      { field: "orders.total_price", op: "between", value: [n, n + 1] },
      { field: "customers.is_returning", op: "equals", value: n > 0 },
      { field: "orders.created_at", op: "gte", value: "2026-03-01" },
    ],
  });

  it("the SQL text depends on the query's shape only: other values give the same SQL", () => {
    fc.assert(
      fc.property(anyText, anyText, fc.double({ noNaN: true, noDefaultInfinity: true }), (a, b, n) => {
        const plan = (s: string) =>
          planGeneralQuery(
            general({
              measures: ["orders.count", "orders.refunds", "attribution.orders"],
              dateRange: { start: "2026-03-01", end: "2026-03-02" },
              filters: filterOf(s, n),
              orderSettings: {
                exclusionFilters: [
                  {
                    id: "0b6f3c39-2a8e-4d0a-9a57-0d1f0c1a6c11",
                    name: s,
                    enabled: true,
                    conditionGroups: [
                      {
                        id: "1b6f3c39-2a8e-4d0a-9a57-0d1f0c1a6c11",
                        logic: "or",
                        conditions: [
                          {
                            id: "2b6f3c39-2a8e-4d0a-9a57-0d1f0c1a6c11",
                            field: "gateway",
                            operator: "contains",
                            value: s,
                          },
                        ],
                      },
                    ],
                    createdAt: "2026-01-01T00:00:00Z",
                    updatedAt: "2026-01-01T00:00:00Z",
                  },
                ],
              },
            }),
            ENV,
          );
        const pa = plan(a);
        const pb = plan(b);
        expect(shapeOf(pa)).toEqual(shapeOf(pb));
        for (const st of pa.statements) {
          const values = Object.values(st.params).flat();
          expect(values).toContain(a);
          // every placeholder names a parameter of its statement
          for (const m of st.sql.matchAll(PLACEHOLDER)) expect(st.params).toHaveProperty(m[1]!);
        }
      }),
      { numRuns: 60 },
    );
  });

  it("pixel ids, dates, timezones, currencies, windows and event names are parameters too", () => {
    const a = planAttributionQuery(
      attribution({
        dimension: "attribution.campaign_id",
        dateRange: { start: "2026-03-01", end: "2026-03-02" },
        timezone: "Asia/Tokyo",
        currency: "EUR",
        attributionModel: "first_click",
        attributionWindow: 14,
        valueSource: "events",
        eventName: "signup",
      }),
      ENV,
    );
    const b = planAttributionQuery(
      {
        ...attribution({
          dimension: "attribution.campaign_id",
          dateRange: { start: "2025-12-30", end: "2026-01-04" },
          timezone: "Pacific/Chatham",
          currency: "JPY",
          attributionModel: "first_click",
          attributionWindow: 90,
          valueSource: "events",
          eventName: "lead",
        }),
        pixelId: "another-pixel",
      },
      ENV,
    );
    expect(shapeOf(a)).toEqual(shapeOf(b));
    expect(a.statements.map((s) => s.source)).toEqual(["attribution", "ads"]);
    const params = Object.values(a.statements[0]!.params);
    for (const v of ["px_1", "Asia/Tokyo", "EUR", 14, "signup"]) expect(params).toContain(v);
  });
});

describe("identifiers only from the catalog", () => {
  it("unknown measures, dimensions and filter fields are refused by name, never written into SQL", () => {
    const bad = (body: Record<string, unknown>, name: string) => {
      let caught: unknown;
      try {
        planGeneralQuery(general({ dateRange: { start: "2026-03-01", end: "2026-03-02" }, ...body }), ENV);
      } catch (err) {
        caught = err;
      }
      expect(caught).toBeInstanceOf(ValidationError);
      expect((caught as Error).message).toContain(name);
    };
    bad({ measures: ["orders.count; DROP TABLE orders"] }, "orders.count; DROP TABLE orders");
    bad(
      { measures: ["orders.count"], dimensions: ["o.country) AS x, (SELECT 1"] },
      "o.country) AS x, (SELECT 1",
    );
    bad(
      {
        measures: ["orders.count"],
        filters: { field: "toString(o.customer_email_hash)", op: "equals", value: "x" },
      },
      "toString(o.customer_email_hash)",
    );
    bad(
      { measures: ["orders.count"], filters: { field: "orders.country", op: "equals; --", value: "x" } },
      "equals; --",
    );
    expect(() =>
      planAttributionQuery(
        attribution({
          dimension: "orders.country",
          dateRange: { start: "2026-03-01", end: "2026-03-02" },
          attributionModel: "last_click",
          attributionWindow: 7,
        }),
        ENV,
      ),
    ).toThrow(/orders\.country/);
  });

  it("each dimension's column is the catalog's expression", () => {
    for (const f of FIELDS.filter((x) => x.family === "orders" || x.family === "customers")) {
      const plan = planGeneralQuery(
        general({
          measures: ["orders.count"],
          dimensions: [f.field],
          dateRange: { start: "2026-03-01", end: "2026-03-01" },
        }),
        ENV,
      );
      expect(plan.statements[0]!.sql, f.field).toContain(`toString(${f.column}) AS d0`);
    }
  });

  it("every catalog measure plans on its own (a typo in the catalog would throw here)", () => {
    for (const m of MEASURES) {
      const plan = planGeneralQuery(
        general({ measures: [m.key], dateRange: { start: "2026-03-01", end: "2026-03-01" } }),
        ENV,
      );
      // fixed costs need only the days and the cost lines: no statement
      if (m.key === "costs.fixed") expect(plan.reportCosts).toBe(true);
      else expect(plan.statements.length, m.key).toBeGreaterThan(0);
    }
  });

  it("every operator of every field type compiles to bound SQL", () => {
    const sample: Record<string, unknown> = {
      string: "x",
      string_array: "x",
      number: 3,
      datetime: "2026-03-01",
      boolean: true,
    };
    for (const f of FIELDS.filter((x) => x.family === "orders" || x.family === "customers")) {
      for (const op of OPERATORS_BY_TYPE[f.type]) {
        const value =
          op === "is_set" || op === "is_not_set"
            ? undefined
            : op === "in" || op === "not_in"
              ? [sample[f.type]]
              : op === "between"
                ? [sample[f.type], sample[f.type]]
                : sample[f.type];
        const plan = planGeneralQuery(
          general({
            measures: ["orders.count"],
            dateRange: { start: "2026-03-01", end: "2026-03-01" },
            filters: value === undefined ? { field: f.field, op } : { field: f.field, op, value },
          }),
          ENV,
        );
        expect(plan.statements[0]!.sql, `${f.field} ${op}`).toContain(FIELD_BY_NAME.get(f.field)!.column);
      }
    }
  });
});

describe("the hourly order rollup form", () => {
  const ordersStatement = (body: Record<string, unknown>, env: QueryEnvironment = ENV) =>
    planGeneralQuery(
      general({ dateRange: { start: "2026-03-01", end: "2026-03-07" }, timezone: "UTC", ...body }),
      env,
    ).statements.find((s) => s.source === "orders");

  it("is planned for orders sums and distinct customers, with the fresh hours as a parameter", () => {
    const s = ordersStatement({ measures: ["orders.count", "orders.aov", "customers.count"] });
    expect(s?.derived?.fresh).toBe("hours");
    expect(s?.derived?.sql).toContain("FROM order_facts_hourly FINAL");
    expect(s?.derived?.params[s.derived.freshParam]).toEqual([]);
    // The fresh form reads the fresh hours from raw orders; with no fresh hours, the rollup alone.
    expect(s?.derived?.sql).toContain("FROM orders FINAL");
    expect(s?.derived?.current?.sql).toContain("FROM order_facts_hourly FINAL");
    expect(s?.derived?.current?.sql).not.toMatch(/FROM orders FINAL/);
    expect(s?.derived?.current?.sql).not.toContain("UNION ALL");
    // Whole-hour zones, DST changes included.
    expect(
      ordersStatement({ measures: ["orders.count"], timezone: "America/New_York" })?.derived,
    ).toBeDefined();
  });

  it("is not planned where the rollup cannot answer exactly", () => {
    const refused: Record<string, unknown>[] = [
      { measures: ["orders.units"] },
      { measures: ["customers.new"] },
      { measures: ["orders.count"], dimensions: ["orders.country"] },
      { measures: ["orders.count"], filters: { field: "orders.currency", op: "equals", value: "EUR" } },
      { measures: ["orders.count"], timezone: "Asia/Kolkata" },
      {
        measures: ["orders.count"],
        orderSettings: {
          exclusionFilters: [
            {
              id: "7d4c2a10-0000-4000-8000-000000000001",
              name: "no POS",
              enabled: true,
              conditionGroups: [
                {
                  id: "7d4c2a10-0000-4000-8000-000000000002",
                  logic: "and",
                  conditions: [
                    {
                      id: "7d4c2a10-0000-4000-8000-000000000003",
                      field: "sourceName",
                      operator: "equals",
                      value: "pos",
                    },
                  ],
                },
              ],
              createdAt: "2026-01-01T00:00:00Z",
              updatedAt: "2026-01-01T00:00:00Z",
            },
          ],
        },
      },
    ];
    for (const body of refused) expect(ordersStatement(body)?.derived, JSON.stringify(body)).toBeUndefined();
  });
});

describe("small converting statements sharing one", () => {
  const plan = (body: Record<string, unknown>) =>
    planGeneralQuery(
      general({ dateRange: { start: "2026-03-01", end: "2026-03-07" }, timezone: "UTC", ...body }),
      ENV,
    ).statements;

  it("puts the rollups' amounts and ad spend in one statement, distinct customers apart", () => {
    const statements = plan({
      measures: ["orders.total_revenue", "orders.refunds", "ads.spend", "customers.count"],
    });
    expect(statements.map((s) => (s.sources ?? [s.source]).join("+"))).toEqual([
      "orders+refunds+ads",
      "orders",
    ]);
    const shared = statements[0]!;
    // Raw: each source from raw data in a branch of its own, its CTEs scoped to it.
    expect(shared.sql.match(/UNION ALL\n {2}SELECT \* FROM \(/g)).toHaveLength(2);
    expect(shared.sql).toContain("FROM ad_metrics_daily FINAL");
    expect(shared.sql).not.toContain("order_facts_hourly");
    // Derived: each rollup with its own fresh hours, bound empty here.
    const d = shared.derived!;
    expect(d.fresh).toBe("hours");
    expect(d.moreFresh?.map((m) => m.fresh)).toEqual(["refundHours"]);
    expect(d.params[d.freshParam]).toEqual([]);
    expect(d.params[d.moreFresh![0]!.param]).toEqual([]);
    for (const table of ["order_facts_hourly FINAL", "refund_facts_hourly FINAL", "ad_metrics_daily FINAL"])
      expect(d.sql).toContain(table);
    // Nothing past the watermark: the rollups alone, no raw orders or refunds.
    expect(d.current?.sql).not.toMatch(/FROM (orders|refunds) FINAL/);
    // What runs when that form cannot: the statements it replaced, each with its own derived form.
    expect(shared.split?.map((x) => [x.source, x.derived?.fresh])).toEqual([
      ["orders", "hours"],
      ["refunds", "refundHours"],
      ["ads", undefined],
    ]);
  });

  it("leaves raw statements of orders and refunds apart, and shares nothing without a rollup or an amount", () => {
    const byDimension = plan({
      measures: ["orders.total_revenue", "orders.refunds"],
      dimensions: ["orders.country"],
    });
    expect(byDimension.map((s) => s.sources ?? s.source)).toEqual(["orders", "refunds"]);
    // orders.count converts nothing: its statement stays its own.
    expect(plan({ measures: ["orders.count", "ads.spend"] }).map((s) => s.sources ?? s.source)).toEqual([
      "orders",
      "ads",
    ]);
  });
});

describe("the conversion_touches forms of an attribution statement", () => {
  const [statement] = planAttributionQuery(
    attribution({
      dimension: "attribution.source",
      dateRange: { start: "2026-03-01", end: "2026-03-07" },
      timezone: "UTC",
      attributionModel: "last_click",
      attributionWindow: 30,
    }),
    ENV,
  ).statements;

  it("with fresh ids read raw, and (current) the derived table alone for when there are none", () => {
    const d = statement?.derived;
    expect(d?.fresh).toBe("ids");
    expect(d?.params[d.freshParam]).toEqual([]);
    for (const cte of ["fresh_hops AS (", "rc AS (", "FROM touchpoints", "NOT IN (SELECT conv_id FROM rc)"])
      expect(d?.sql).toContain(cte);
    const current = d?.current;
    expect(current?.sql).toContain("FROM conversion_touches FINAL");
    for (const cte of ["fresh_hops", "rc AS (", "FROM touchpoints", "NOT IN"])
      expect(current?.sql).not.toContain(cte);
    // The same request values, bound alike in both forms.
    expect(Object.values(current?.params ?? {})).toEqual(
      Object.values(d?.params ?? {}).filter((v) => !(Array.isArray(v) && v.length === 0)),
    );
  });

  it("conversions meet their credited touches on one key of id and time", () => {
    for (const sql of [statement?.derived?.sql, statement?.derived?.current?.sql]) {
      expect(sql).toContain(
        "LEFT JOIN tagg AS a ON a.conv_key = concat(c.conv_id, '@', toString(toUnixTimestamp64Milli(c.ts)))",
      );
    }
  });
});

describe("which attribution statements the credit cells answer", () => {
  const base = {
    dimension: "attribution.source",
    dateRange: { start: "2026-03-01", end: "2026-03-07" },
    timezone: "UTC",
    attributionModel: "last_click",
    attributionWindow: 30,
  };
  const cellsOf = (body: Record<string, unknown>) =>
    planAttributionQuery(attribution({ ...base, ...body }), ENV).statements[0]?.cells;

  it("one without filters has a shape, the cells' forms and the fresh sets they read", () => {
    const cells = cellsOf({});
    expect(cells?.shape).toBe("last_click:30:attribution.source");
    expect(cells?.derived.fresh).toBe("creditHours");
    expect(cells?.derived.moreFresh?.map((m) => m.fresh)).toEqual(["ids"]);
    expect(cells?.derived.sql).toContain("FROM credit_cells FINAL");
    expect(cells?.derived.sql).toContain("AND hour NOT IN {p");
    // The fresh hours' conversions are credited one by one, from the derived touches of those hours.
    expect(cells?.derived.sql).toContain("FROM conversion_touches FINAL");
    // With nothing past the watermark: the cells alone.
    const current = cells?.derived.current?.sql ?? "";
    expect(current).toContain("FROM credit_cells FINAL");
    for (const raw of ["conversion_touches", "FROM orders", "FROM touchpoints", "NOT IN"])
      expect(current).not.toContain(raw);
  });

  it("the shape names the model, the window and the credited field; without a field, only touched counts", () => {
    expect(cellsOf({ attributionModel: "linear", attributionWindow: -1 })?.shape).toBe(
      "linear:-1:attribution.source",
    );
    const general = planGeneralQuery(
      generalQuerySchema.parse({
        pixelId: "px_1",
        measures: ["attribution.orders"],
        dateRange: base.dateRange,
        timezone: "UTC",
        attributionModel: "first_click",
        attributionWindow: 7,
      }),
      ENV,
    );
    expect(general.statements.find((s) => s.source === "attribution")?.cells?.shape).toBe("touched:7:");
    // A conversion's own dimension is not in the cells.
    const byCurrency = planGeneralQuery(
      generalQuerySchema.parse({
        pixelId: "px_1",
        measures: ["attribution.orders"],
        dimensions: ["orders.currency"],
        dateRange: base.dateRange,
        timezone: "UTC",
      }),
      ENV,
    );
    expect(byCurrency.statements.find((s) => s.source === "attribution")?.cells).toBeUndefined();
  });

  it("filters, an enabled exclusion filter, a half-hour timezone or another half-life: no cells", () => {
    for (const body of [
      { filters: { field: "attribution.source", op: "equals", value: "google" } },
      { filters: { field: "orders.currency", op: "equals", value: "USD" } },
      {
        orderSettings: {
          exclusionFilters: [
            {
              id: "00000000-0000-4000-8000-000000000001",
              name: "no EUR",
              enabled: true,
              createdAt: "2026-01-01T00:00:00Z",
              updatedAt: "2026-01-01T00:00:00Z",
              conditionGroups: [
                {
                  id: "00000000-0000-4000-8000-000000000002",
                  logic: "and",
                  conditions: [
                    {
                      id: "00000000-0000-4000-8000-000000000003",
                      field: "currency",
                      operator: "equals",
                      value: "EUR",
                    },
                  ],
                },
              ],
            },
          ],
        },
      },
      { timezone: "Asia/Kolkata" },
      { attributionModel: "time_decay", attributionHalfLifeDays: 3 },
    ])
      expect(cellsOf(body), JSON.stringify(body)).toBeUndefined();
    // Order settings that only count more statuses are read on the cells' status.
    expect(cellsOf({ orderSettings: { countPendingOrders: true } })?.shape).toBe(
      "last_click:30:attribution.source",
    );
    expect(cellsOf({ attributionModel: "time_decay" })?.shape).toBe("time_decay:30:attribution.source");
  });

  it("a shape key reads back as its shape; a key naming none reads as null", () => {
    for (const key of [
      "last_click:30:attribution.source",
      "touched:-1:",
      "position_based:1:attribution.ad_id",
    ])
      expect(creditShapeKey(parseCreditShape(key)!)).toBe(key);
    for (const key of [
      "bogus:30:attribution.source",
      "last_click:31:attribution.source",
      "last_click:30:orders.currency",
      "last_click:30:",
      "touched:30:attribution.source",
      "a:b:c:d",
    ])
      expect(parseCreditShape(key), key).toBeNull();
  });
});

describe("wholeHourOffsets", () => {
  const range = (start: string, end: string) => ({ start: new Date(start), end: new Date(end) });
  it("is true where every local hour is a UTC hour, false for half-hour zones", () => {
    expect(wholeHourOffsets("UTC", range("2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"))).toBe(true);
    expect(wholeHourOffsets("Europe/Berlin", range("2026-01-01T00:00:00Z", "2027-01-01T00:00:00Z"))).toBe(
      true,
    );
    expect(wholeHourOffsets("Asia/Kolkata", range("2026-03-01T00:00:00Z", "2026-03-02T00:00:00Z"))).toBe(
      false,
    );
    // +10:30 in the southern winter only.
    expect(
      wholeHourOffsets("Australia/Lord_Howe", range("2026-01-01T00:00:00Z", "2026-02-01T00:00:00Z")),
    ).toBe(true);
    expect(
      wholeHourOffsets("Australia/Lord_Howe", range("2026-01-01T00:00:00Z", "2026-12-01T00:00:00Z")),
    ).toBe(false);
  });
});

describe("a compare period", () => {
  const periods = (compare: { start: string; end: string }) =>
    planGeneralQuery(
      general({
        measures: ["orders.count", "orders.refunds", "ads.spend", "attribution.orders"],
        dateRange: { start: "2026-03-01", end: "2026-03-07" },
        compareDateRange: compare,
        timezone: "UTC",
      }),
      ENV,
    ).statements.map((s) => `${(s.sources ?? [s.source]).join("+")}/${s.period}`);

  it("is answered by the fact sources' own statements when it does not overlap the range", () => {
    // Attribution keeps one statement per period; before or after the range alike.
    for (const compare of [
      { start: "2026-02-22", end: "2026-02-28" },
      { start: "2026-03-08", end: "2026-03-14" },
    ]) {
      // Refunds (from their rollup) and ad spend convert amounts and share one statement.
      expect(periods(compare)).toEqual([
        "orders/both",
        "refunds+ads/both",
        "attribution/primary",
        "attribution/compare",
      ]);
    }
  });

  it("overlapping the range, has statements of its own: a shared day counts in both periods", () => {
    expect(periods({ start: "2026-02-26", end: "2026-03-01" })).toEqual([
      "orders/primary",
      "refunds+ads/primary",
      "attribution/primary",
      "orders/compare",
      "refunds+ads/compare",
      "attribution/compare",
    ]);
  });
});

describe("which cohort queries the cohort cells answer", () => {
  // now 2026-03-15T12:00Z; the account in Europe/Berlin, default settings (only kind 1 counted).
  const cells = (body: Record<string, unknown>, env: QueryEnvironment = ENV) =>
    planCohorts(
      resolveCohorts(
        cohortQuerySchema.parse({
          pixelId: "px_1",
          dateRange: { start: "2025-10-01", end: "2026-03-15" },
          cohortGranularity: "month",
          ...body,
        }),
        env,
      ),
    ).derived;

  it("a range from a month's first day to today: the cells, for the query's timezone and counting", () => {
    const d = cells({});
    expect(d).toMatchObject({ timezone: "Europe/Berlin", mask: 1, end: "2026-03-15 23:00:00.000" });
    expect(cells({ timezone: "UTC", orderSettings: { countPendingOrders: true } })).toMatchObject({
      timezone: "UTC",
      mask: 3,
    });
    // Weeks start on Monday: 2026-01-05 is one.
    expect(
      cells({ cohortGranularity: "week", dateRange: { start: "2026-01-05", end: "2026-03-15" } }),
    ).toBeDefined();
  });

  it("raw where the cells cannot know: a filter, an exclusion filter, an unaligned start, an old end", () => {
    expect(cells({ filters: { field: "orders.country", op: "equals", value: "US" } })).toBeUndefined();
    expect(cells({ dateRange: { start: "2025-10-02", end: "2026-03-15" } })).toBeUndefined();
    expect(
      cells({ cohortGranularity: "week", dateRange: { start: "2026-01-06", end: "2026-03-15" } }),
    ).toBeUndefined();
    // The range ends 2026-03-08 (Berlin): its end instant is more than 7 days before now.
    expect(cells({ dateRange: { start: "2025-10-01", end: "2026-03-07" } })).toBeUndefined();
    expect(cells({ dateRange: { start: "2025-10-01", end: "2026-03-08" } })).toBeDefined();
    const excluding = {
      ...ENV,
      storedOrderSettings: {
        ...DEFAULT_ORDER_SETTINGS,
        exclusionFilters: [
          {
            name: "tests",
            enabled: true,
            conditionGroups: [
              { logic: "and", conditions: [{ field: "tags", operator: "contains", value: "test" }] },
            ],
          },
        ],
      },
    } as QueryEnvironment;
    expect(cells({}, excluding)).toBeUndefined();
  });
});
