import { AppError, type EventIssue } from "../errors.js";
import { findUnstorableText } from "../shared/text.js";
import { describeIssue } from "../shared/validate.js";
import { eventSchema, type IncomingEvent, MAX_FUTURE_MS } from "./schema.js";

/** 400 in the events envelope: one detail per problem, across all events, with index and field. */
export class EventsValidationError extends AppError {
  readonly status = 400;
  constructor(
    readonly eventIssues: EventIssue[],
    message = "Validation failed",
  ) {
    super(message);
  }
}

export interface ValidEvent {
  event: IncomingEvent;
  /** When the event happened: its timestamp, or the receive time. */
  eventTimeMs: number;
}

/**
 * The first value the stores cannot hold as sent, anywhere in the event (pass-through keys included):
 * text with a NUL or a lone UTF-16 surrogate (shared/text.ts), or a number JSON could not represent
 * (1e400 → Infinity would be stored as null).
 */
function unstorable(value: unknown): { field: string; message: string } | null {
  const text = findUnstorableText(value);
  if (text) return { field: text.path.join("."), message: text.message };
  return nonFinite(value, "");
}

function nonFinite(value: unknown, path: string): { field: string; message: string } | null {
  if (typeof value === "number")
    return Number.isFinite(value) ? null : { field: path, message: "numbers must be finite" };
  if (value === null || typeof value !== "object") return null;
  for (const [k, v] of Object.entries(value)) {
    const found = nonFinite(v, path ? `${path}.${k}` : k);
    if (found) return found;
  }
  return null;
}

/** Validates every event; any invalid event rejects the whole request (nothing is stored). */
export function validateEvents(
  raw: readonly unknown[],
  receivedAtMs: number,
  options: { clampFuture?: boolean } = {},
): ValidEvent[] {
  const issues: EventIssue[] = [];
  const out: ValidEvent[] = [];
  raw.forEach((candidate, index) => {
    if (candidate === null || typeof candidate !== "object" || Array.isArray(candidate)) {
      issues.push({ index, field: "", message: "event must be a JSON object" });
      return;
    }
    const parsed = eventSchema.safeParse(candidate);
    if (!parsed.success) {
      for (const issue of parsed.error.issues) {
        const field = issue.path.map(String).join(".");
        issues.push({ index, field, message: describeIssue(field || "event", issue) });
      }
      return;
    }
    const bad = unstorable(candidate);
    if (bad) {
      issues.push({ index, field: bad.field, message: `${bad.field}: ${bad.message}` });
      return;
    }
    let eventTimeMs = receivedAtMs;
    if (parsed.data.timestamp) {
      eventTimeMs = Date.parse(parsed.data.timestamp);
      // A browser's clock may run fast: its events take the receive time instead of being lost.
      if (eventTimeMs > receivedAtMs + MAX_FUTURE_MS && options.clampFuture) eventTimeMs = receivedAtMs;
      else if (eventTimeMs > receivedAtMs + MAX_FUTURE_MS) {
        issues.push({
          index,
          field: "timestamp",
          message: "timestamp: more than 10 minutes ahead of the server clock",
        });
        return;
      }
    }
    out.push({ event: parsed.data, eventTimeMs });
  });
  if (issues.length) {
    throw new EventsValidationError(
      issues,
      `${issues.length} validation problem${issues.length > 1 ? "s" : ""}`,
    );
  }
  return out;
}
