/**
 * The dashboards page's drill into attribution tables (web/dashboards/drill.ts: browser code without
 * DOM): the listing's body and the journey's URL repeat the widget's query, and the panel's figures.
 */
import { describe, expect, it } from "vitest";
import { ATTRIBUTION_MODELS } from "../../src/query/attribution-models.js";
import {
  attributionText,
  beforeText,
  creditedOrdersBody,
  type Drill,
  halfLifeOf,
  instantText,
  journeyPath,
  MODELS,
  pageText,
  shareText,
} from "../../web/dashboards/drill.js";

const drill: Drill = {
  query: {
    pixelId: "px",
    dateRange: { start: "2026-08-10", end: "2026-08-12" },
    attributionModel: "time_decay",
    attributionWindow: 30,
    attributionHalfLifeDays: 14,
    currency: "EUR",
    filters: { and: [{ field: "orders.country", op: "equals", value: "DE" }] },
  },
  dimension: "attribution.channel",
  value: "(none)",
};

describe("requests", () => {
  it("the listing repeats the widget's range, model, window, half-life, currency and filters", () => {
    expect(creditedOrdersBody(drill, 40)).toEqual({
      pixelId: "px",
      dimension: "attribution.channel",
      dimensionValue: "(none)",
      dateRange: { start: "2026-08-10", end: "2026-08-12" },
      attributionModel: "time_decay",
      attributionWindow: 30,
      attributionHalfLifeDays: 14,
      currency: "EUR",
      filters: drill.query.filters,
      limit: 20,
      offset: 40,
    });
    const { filters: _f, attributionHalfLifeDays: _h, ...bare } = drill.query;
    const body = creditedOrdersBody({ ...drill, query: bare }, 0);
    expect(body).not.toHaveProperty("filters");
    expect(body).not.toHaveProperty("attributionHalfLifeDays");
  });

  it("the journey's order id is one escaped path segment", () => {
    expect(journeyPath("#1001/a?b", drill.query)).toBe(
      "/db-mgmt/api/orders/%231001%2Fa%3Fb/journey?window=30&currency=EUR&halfLifeDays=14",
    );
    expect(
      journeyPath("O1", { ...drill.query, attributionWindow: -1, attributionHalfLifeDays: undefined }),
    ).toBe("/db-mgmt/api/orders/O1/journey?window=-1&currency=EUR");
  });
});

describe("the model picker", () => {
  it("offers every model the API takes", () => {
    expect(MODELS.map(([m]) => m).sort()).toEqual([...ATTRIBUTION_MODELS].sort());
  });

  it.each([
    ["7", 7],
    ["1", 1],
    ["90", 90],
    ["2.5", 2.5],
    [" 14 ", 14],
    ["0", null],
    ["91", null],
    ["", null],
    ["-3", null],
    ["1e1", null],
  ])("half-life %j → %j", (text, half) => {
    expect(halfLifeOf(text)).toBe(half);
  });

  it("the subtitle names the half-life under time decay only", () => {
    expect(attributionText("time_decay", 30, 14)).toBe("time decay (half-life 14 days), 30-day window");
    expect(attributionText("time_decay", -1, undefined)).toBe("time decay (half-life 7 days), no window");
    expect(attributionText("time_decay", 7, 1)).toBe("time decay (half-life 1 day), 7-day window");
    expect(attributionText("position_based", 7, 14)).toBe("position based, 7-day window");
    expect(attributionText("last_click", 30, undefined)).toBe("last click, 30-day window");
  });
});

describe("figures", () => {
  it.each([
    [1, "100%"],
    [0.3333, "33.33%"],
    [0.5, "50%"],
    [0, "0%"],
    [0.6883, "68.83%"],
  ])("share %d → %s", (credit, text) => {
    expect(shareText(credit)).toBe(text);
  });

  it("pages", () => {
    expect(pageText({ limit: 20, offset: 0, total: 57, hasMore: true }, 20)).toBe("1–20 of 57");
    expect(pageText({ limit: 20, offset: 40, total: 57, hasMore: false }, 17)).toBe("41–57 of 57");
    expect(pageText({ limit: 20, offset: 0, total: 0, hasMore: false }, 0)).toBe("0 orders");
    expect(pageText({ limit: 20, offset: 60, total: 57, hasMore: false }, 0)).toBe("none past 60 of 57");
  });

  it("instants are shown in UTC, and how long before the order a touch was", () => {
    expect(instantText("2026-08-10T10:00:00.000Z")).toBe("2026-08-10 10:00:00 UTC");
    expect(instantText("not a time")).toBe("not a time");
    const order = "2026-08-10T10:00:00Z";
    expect(beforeText("2026-08-10T09:30:00Z", order)).toBe("30 min");
    expect(beforeText("2026-08-10T04:50:00Z", order)).toBe("5 h 10 min");
    expect(beforeText("2026-08-10T05:00:00Z", order)).toBe("5 h");
    expect(beforeText("2026-07-31T08:00:00Z", order)).toBe("10 d 2 h");
    expect(beforeText("2026-07-31T10:00:00Z", order)).toBe("10 d");
    expect(beforeText(order, order)).toBe("at the order");
  });
});
