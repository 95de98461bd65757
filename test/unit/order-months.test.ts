/**
 * Which tombstones a sync of one order writes (src/sync/order-months.ts). Worked example: "o" live in
 * March at version 5; a write at version 7 created in May hides March at version 6 (one below the
 * row that stays); a write at 7 in March itself hides nothing; without a write, a stale live January
 * row at version 3 is hidden at version 4 (below the newest live row, 5), and months already
 * tombstoned stay as they are.
 */
import { describe, expect, it } from "vitest";
import { parseScript } from "../../src/stores/migrations.js";
import { liveVersions, type StoredOrderMonth, tombstonesFor } from "../../src/sync/order-months.js";

const s = (createdAt: string, version: number, deleted = false): StoredOrderMonth => ({
  orderId: "o",
  createdAt: `${createdAt} 00:00:00.000`,
  version,
  deleted,
});

describe("tombstonesFor", () => {
  it("a write to another month hides the old month at the new version", () => {
    expect(
      tombstonesFor("o", [s("2026-03-10", 5)], { createdAt: "2026-05-01 00:00:00.000", version: 7 }),
    ).toEqual([{ orderId: "o", createdAt: "2026-03-10 00:00:00.000", version: 6 }]);
  });
  it("a write within the same month hides nothing", () => {
    expect(
      tombstonesFor("o", [s("2026-03-10", 5)], { createdAt: "2026-03-31 00:00:00.000", version: 7 }),
    ).toEqual([]);
  });
  it("without a write, stale live months below the newest live row are hidden at its version", () => {
    const stored = [s("2026-01-02", 3), s("2026-03-10", 5), s("2026-02-02", 4, true)];
    expect(tombstonesFor("o", stored, null)).toEqual([
      { orderId: "o", createdAt: "2026-01-02 00:00:00.000", version: 4 },
    ]);
    expect(liveVersions(stored)).toEqual(new Map([["o", 5]]));
  });
  it("a new order or a settled one needs none", () => {
    expect(tombstonesFor("o", [], { createdAt: "2026-03-01 00:00:00.000", version: 1 })).toEqual([]);
    expect(tombstonesFor("o", [s("2026-03-10", 5), s("2026-01-01", 5, true)], null)).toEqual([]);
  });
});

describe("parseScript", () => {
  it("attaches a `-- when:` guard to the statement after it and drops other comments", () => {
    expect(
      parseScript(
        "-- head\nCREATE TABLE a (x String);\n-- when: SELECT 1\n-- why\nEXCHANGE TABLES a AND b;\nDROP TABLE c;\n",
      ),
    ).toEqual([
      { sql: "CREATE TABLE a (x String)" },
      { sql: "EXCHANGE TABLES a AND b", when: "SELECT 1" },
      { sql: "DROP TABLE c" },
    ]);
  });
});
