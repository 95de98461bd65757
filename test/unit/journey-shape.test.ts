/**
 * The journey's pure parts (src/journeys/shape.ts, sql.ts): rounding that adds up, credit over the
 * touches inside the window only, which identity links a touch crossed, and statements that carry
 * every request value as a parameter.
 *
 * Worked example for shapeJourney: an order at 12:00 worth 90 (total 100 − refunds 10), stored under
 * id B, whose canonical link points at A. Touches (all of identity A once resolved):
 *   x0 day −40  stored A   before the window (0 credit)
 *   x1 day −2   stored C, C → A (linked at ms 5)
 *   x2 day −1   stored A
 *   x3 day −1   stored B (the order's own id) — same instant as x2, after it by event id
 * In the window: x1, x2, x3. linear 1/3 → 0.3334, 0.3333, 0.3333 and 30, 30, 30;
 * position_based 0.4, 0.2, 0.4 → 36, 18, 36. x1 crossed its own link and the order's; x2 the
 * order's only; x3 none (it carries the order's stored id).
 */
import { describe, expect, it } from "vitest";
import { type OrderRow, pageKey, shapeJourney, type TouchRow } from "../../src/journeys/shape.js";
import { identityLinksStatement, orderStatement, touchesStatement } from "../../src/journeys/sql.js";

const DAY = 86_400_000;
const T = Date.UTC(2026, 2, 10, 12);

const orderRow: OrderRow = {
  order_id: "O",
  created_ms: T,
  status: "paid",
  currency: "USD",
  total_price: 100,
  stored_id: "B",
  linked_to: "A",
  linked_ms: 7,
  total_target: 100,
  refunded_target: 10,
};

const touchRow = (
  event_id: string,
  ms: number,
  stored_id: string,
  extra: Partial<TouchRow> = {},
): TouchRow => ({
  event_id,
  touch_ms: ms,
  channel: "paid_search",
  source: "google",
  medium: "",
  campaign: "",
  campaign_id: "",
  adset_id: "",
  ad_id: "",
  click_id_type: "",
  identity_id: "cookie",
  stored_id,
  linked_to: "",
  linked_ms: 0,
  in_window: 1,
  older: 1,
  ...extra,
});

const TOUCHES = [
  // deliberately out of order: the answer sorts by (time, event id)
  touchRow("x3", T - DAY, "B"),
  touchRow("x1", T - 2 * DAY, "C", { linked_to: "A", linked_ms: 5 }),
  touchRow("x0", T - 40 * DAY, "A", { in_window: 0 }),
  touchRow("x2", T - DAY, "A", { identity_id: "" }),
];

const shape = (over: Partial<Parameters<typeof shapeJourney>[0]> = {}) =>
  shapeJourney({
    order: orderRow,
    touches: TOUCHES,
    landingPages: new Map([[pageKey("x1", T - 2 * DAY), "https://shop.example/a"]]),
    links: [],
    linksTotal: 0,
    currency: "USD",
    window: 30,
    halfLifeDays: 7,
    ...over,
  });

describe("shapeJourney", () => {
  it("lists touches by (time, event id) and credits only those in the window", () => {
    const j = shape();
    expect(j.touches.map((t) => [t.eventId, t.inWindow])).toEqual([
      ["x0", false],
      ["x1", true],
      ["x2", true],
      ["x3", true],
    ]);
    expect(j.touches.map((t) => t.credit.linear)).toEqual([0, 0.3334, 0.3333, 0.3333]);
    expect(j.touches.map((t) => t.revenue.linear)).toEqual([0, 30, 30, 30]);
    expect(j.touches.map((t) => t.credit.position_based)).toEqual([0, 0.4, 0.2, 0.4]);
    expect(j.touches.map((t) => t.revenue.position_based)).toEqual([0, 36, 18, 36]);
    expect(j.touches.map((t) => t.credit.first_click)).toEqual([0, 1, 0, 0]);
    // x2 and x3 are at the same instant: the later event id is the last click.
    expect(j.touches.map((t) => t.credit.last_click)).toEqual([0, 0, 0, 1]);
    expect(j.touches.map((t) => t.revenue.any_click)).toEqual([0, 90, 90, 90]);
    expect(j.attribution).toEqual({
      window: 30,
      halfLifeDays: 7,
      touchesInWindow: 3,
      olderTouchesOmitted: 0,
    });
  });

  it("names the links a touch crossed: its own and the order's, none when it carries the order's id", () => {
    const j = shape();
    const link = (alias: string, ms: number) => ({
      aliasType: "canonical",
      aliasValue: alias,
      canonicalId: "A",
      firstSeen: new Date(ms).toISOString(),
    });
    expect(j.order.identity).toEqual({ storedId: "B", canonicalId: "A", merge: link("B", 7) });
    expect(j.touches.map((t) => [t.eventId, t.identity.merges])).toEqual([
      ["x0", [link("B", 7)]],
      ["x1", [link("C", 5), link("B", 7)]],
      ["x2", [link("B", 7)]],
      ["x3", []],
    ]);
  });

  it("answers absent text as null and finds landing pages by event id and time", () => {
    const j = shape();
    expect(j.touches[1]).toMatchObject({
      medium: null,
      campaignId: null,
      landingPage: "https://shop.example/a",
    });
    expect(j.touches[2]!.landingPage).toBeNull();
    expect(j.touches[2]!.identity.identityId).toBeNull();
  });

  it("the order's value, rounded once; net may be negative", () => {
    expect(shape().order.value).toEqual({ currency: "USD", total: 100, refunds: 10, net: 90 });
    const refundedTwice = shape({ order: { ...orderRow, refunded_target: 130.005 } });
    expect(refundedTwice.order.value.net).toBe(-30.01);
    expect(refundedTwice.touches.map((t) => t.revenue.linear)).toEqual([0, -10.01, -10, -10]);
  });

  it("counts the touches before the window that were left out", () => {
    const j = shape({ touches: TOUCHES.map((t) => ({ ...t, older: 5 })) });
    expect(j.attribution.olderTouchesOmitted).toBe(4);
  });

  it("no touch: nothing credited, no link", () => {
    const j = shape({ touches: [], order: { ...orderRow, linked_to: "", linked_ms: 0 } });
    expect(j.touches).toEqual([]);
    expect(j.order.identity).toEqual({ storedId: "B", canonicalId: "B", merge: null });
    expect(j.attribution.touchesInWindow).toBe(0);
  });

  it("reports how many identity links were left out", () => {
    const links = [{ alias_type: "identity", alias_value: "cookie", linked_to: "A", linked_ms: 1 }];
    const j = shape({ links, linksTotal: 3 });
    expect(j.identityLinks).toEqual([
      {
        aliasType: "identity",
        aliasValue: "cookie",
        canonicalId: "A",
        firstSeen: "1970-01-01T00:00:00.001Z",
      },
    ]);
    expect(j.identityLinksOmitted).toBe(2);
  });
});

describe("statements", () => {
  const hostile = "x' OR 1=1 --";
  it("carry request values only as parameters", () => {
    for (const s of [
      orderStatement("px", hostile, "EUR"),
      touchesStatement("px", hostile, new Date(T), 30, 100),
      identityLinksStatement("px", hostile, 500),
    ]) {
      expect(s.sql).not.toContain(hostile);
      expect(Object.values(s.params)).toContain(hostile);
    }
  });

  it("window -1 binds no window and marks every touch in it", () => {
    const s = touchesStatement("px", "A", new Date(T), -1, 100);
    expect(s.sql).toContain("toUInt8(1) AS in_window");
    expect(s.sql).not.toContain("subtractDays");
  });
});
