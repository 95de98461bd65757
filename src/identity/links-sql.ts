/**
 * How queries resolve a stored identity id in the warehouse: an old canonical id → its survivor,
 * always one hop (merges re-point every alias). `pixel` is a placeholder or a bound parameter;
 * `materialized`: computed once however often the statement reads it (engines that support it).
 */
export function hopsCte(pixel: string, materialized = false): string {
  return `hops AS ${materialized ? "MATERIALIZED " : ""}(
  SELECT alias_value AS old, argMax(canonical_id, version) AS new FROM identity_links
  WHERE pixel_id = ${pixel} AND alias_type = 'canonical' GROUP BY alias_value
)`;
}
