import type { CogLine } from "../costs/resolve.js";
import { addDays } from "../shared/days.js";

/**
 * How a variant's manual COG history takes a new or changed line (docs/costs.md, "Overlapping COG
 * lines"). Lines may overlap; where they do, the line with the latest start wins (resolve.ts). On top
 * of that, two writes keep a typical history tidy:
 *
 * - A new **open-ended** line closes each open-ended line that started before it, on the day before
 *   the new start ("from today the cost is X" ends the previous "from … on" line). A bounded new line
 *   closes nothing: it takes precedence for its own days and the longer line resumes after it.
 * - Two open-ended lines cannot start on the same day: the second would hide the first entirely.
 *   That write is refused (400) and the existing line should be changed instead.
 */

export interface Closure {
  before: CogLine;
  after: CogLine;
}

export type NewLinePlan = { ok: true; closures: Closure[] } | { ok: false; conflict: CogLine };

/** What adding `line` to `history` also changes, or the line it conflicts with. */
export function planNewLine(
  history: readonly CogLine[],
  line: Pick<CogLine, "effectiveStartDate" | "effectiveEndDate">,
): NewLinePlan {
  if (line.effectiveEndDate !== null) return { ok: true, closures: [] };
  const conflict = sameStartOpenEnded(history, line.effectiveStartDate, null);
  if (conflict) return { ok: false, conflict };
  const end = addDays(line.effectiveStartDate, -1);
  const closures = history
    .filter((l) => l.effectiveEndDate === null && l.effectiveStartDate < line.effectiveStartDate)
    .map((l) => ({ before: l, after: { ...l, effectiveEndDate: end } }));
  return { ok: true, closures };
}

/** An open-ended line of `history` (other than `exceptId`) starting on `start`, if any. */
export function sameStartOpenEnded(
  history: readonly CogLine[],
  start: string,
  exceptId: string | null,
): CogLine | undefined {
  return history.find(
    (l) => l.id !== exceptId && l.effectiveEndDate === null && l.effectiveStartDate === start,
  );
}

/** Chronological order of a history: by start day, then creation (ULID). */
export const chronological = (a: CogLine, b: CogLine) =>
  a.effectiveStartDate !== b.effectiveStartDate
    ? a.effectiveStartDate < b.effectiveStartDate
      ? -1
      : 1
    : a.id < b.id
      ? -1
      : a.id > b.id
        ? 1
        : 0;
