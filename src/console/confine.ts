import type { Params } from "../stores/warehouse/port.js";
import { analystCtes, LIMIT_PARAM, PIXEL_PARAM, pixelTableFilters } from "./tables.js";

/**
 * Layer 2: the validated query runs inside a WITH list that binds each analyst name to a CTE reading
 * the real table for one pixel (a bound parameter, never text). The engine resolves the query's table
 * names to those CTEs in every scope — aliases, joins, subqueries, UNION parts, CTEs of its own — and
 * any read of a real pixel table is filtered again by `additional_table_filters`.
 */
export interface ConfinedQuery {
  sql: string;
  params: Params;
  settings: Record<string, string>;
}

export function confine(
  canonical: string,
  database: string,
  pixelId: string,
  limit: number,
  /** More names bound the same way: name → a SELECT over constants the service wrote (never input). */
  extra: Readonly<Record<string, string>> = {},
): ConfinedQuery {
  const more = Object.entries(extra).map(([name, select]) => `,\n  \`${name}\` AS (${select})`);
  const sql = `WITH\n  ${analystCtes(database)}${more.join("")}\nSELECT * FROM (\n${canonical}\n)\nLIMIT {${LIMIT_PARAM}:UInt64}`;
  return {
    sql,
    // One row past the limit tells whether the result was cut.
    params: { [PIXEL_PARAM]: pixelId, [LIMIT_PARAM]: limit + 1 },
    settings: {
      additional_table_filters: pixelTableFilters(database, pixelId),
      // PREWHERE runs before the additional filter: a condition moved there (`toUInt64(order_id) = 1`)
      // would meet other pixels' rows, and a failed conversion quotes the value it read. Keeping every
      // condition in WHERE makes the pixel filter apply first (the CTEs read FINAL, which already
      // keeps PREWHERE off by default; both are pinned).
      optimize_move_to_prewhere: "0",
      optimize_move_to_prewhere_if_final: "0",
    },
  };
}
