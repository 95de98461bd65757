/**
 * `withEveryRate`: a statement reading rates from a first day runs once, and once more reading every
 * rate only when a row reports a missing one.
 *
 *   rates_from 2026-04-04, no row missing          → one run, as given
 *   rates_from 2026-04-04, a row "2026-06-05 CHF"  → a second run with rates_from 1970-01-01, its rows
 *   rates_from 1970-01-01 (already every rate)     → one run, the missing rate stands (the 400)
 *   no rates_from (a statement converting nothing) → one run
 */
import { describe, expect, it } from "vitest";
import { withEveryRate } from "../../src/query/every-rate.js";
import type { Params } from "../../src/stores/warehouse/port.js";

function recorder(answers: Record<string, unknown>[][]) {
  const calls: Params[] = [];
  const run = async (params: Params) => {
    calls.push(params);
    return answers[calls.length - 1]!;
  };
  return { calls, run };
}

describe("withEveryRate", () => {
  it("runs once when no rate is missing", async () => {
    const { calls, run } = recorder([[{ fx_missing: "", v: 1 }]]);
    expect(await withEveryRate({ p0: "x", rates_from: "2026-04-04" }, run)).toEqual([
      { fx_missing: "", v: 1 },
    ]);
    expect(calls).toEqual([{ p0: "x", rates_from: "2026-04-04" }]);
  });

  it("runs again reading every rate when a row reports one missing, and answers the second run", async () => {
    const { calls, run } = recorder([
      [{ fx_missing: "" }, { fx_missing: "2026-06-05 CHF" }],
      [{ fx_missing: "", v: 2 }],
    ]);
    expect(await withEveryRate({ p0: "x", rates_from: "2026-04-04" }, run)).toEqual([
      { fx_missing: "", v: 2 },
    ]);
    expect(calls).toEqual([
      { p0: "x", rates_from: "2026-04-04" },
      { p0: "x", rates_from: "1970-01-01" },
    ]);
  });

  it("leaves a rate missing from every rate as it is, and a statement without the parameter alone", async () => {
    const every = recorder([[{ fx_missing: "2026-06-05 CAD" }]]);
    expect(await withEveryRate({ rates_from: "1970-01-01" }, every.run)).toEqual([
      { fx_missing: "2026-06-05 CAD" },
    ]);
    expect(every.calls).toHaveLength(1);
    const none = recorder([[{ fx_missing: "2026-06-05 CAD" }]]);
    await withEveryRate({ p0: "x" }, none.run);
    expect(none.calls).toHaveLength(1);
  });
});
