import type { Params } from "../stores/warehouse/port.js";
import { EVERY_RATE, RATES_FROM } from "./sources/common.js";

/**
 * Runs a statement that reads rates from a first day (`fxCtes`), and once more reading every rate
 * when a row reports a missing one: that rate may lie before the first day. The second answer is the
 * one the unbounded statement gives, so an answer never depends on where the rates were cut; a rate
 * missing in it too is the 400 the interface asks for.
 */
export async function withEveryRate<T extends Record<string, unknown>>(
  params: Params,
  run: (params: Params) => Promise<T[]>,
): Promise<T[]> {
  const rows = await run(params);
  const from = params[RATES_FROM];
  if (from === undefined || from === EVERY_RATE) return rows;
  if (!rows.some((r) => typeof r.fx_missing === "string" && r.fx_missing !== "")) return rows;
  return run({ ...params, [RATES_FROM]: EVERY_RATE });
}
