import { NotFoundError } from "../errors.js";

/**
 * A row of another pixel answers exactly like a missing one: same status, byte-identical body, so
 * a caller cannot learn that an id exists elsewhere.
 */
export function ownedOrNotFound<T extends { pixelId: string }>(
  row: T | null | undefined,
  principal: { pixelId: string },
  message: string,
): T {
  if (!row || row.pixelId !== principal.pixelId) throw new NotFoundError(message);
  return row;
}
