import { AppError } from "../errors.js";
import type { EventIssue } from "../http/errors.js";
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

/** Dotted path of the first non-finite number inside `value`, or null. */
function nonFinitePath(value: unknown, path = ""): string | null {
  if (typeof value === "number") return Number.isFinite(value) ? null : path;
  if (value === null || typeof value !== "object") return null;
  for (const [k, v] of Object.entries(value)) {
    const found = nonFinitePath(v, path ? `${path}.${k}` : k);
    if (found !== null) return found;
  }
  return null;
}

/** Validates every event; any invalid event rejects the whole request (nothing is stored). */
export function validateEvents(raw: readonly unknown[], receivedAtMs: number): ValidEvent[] {
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
        const missing = issue.code === "invalid_type" && issue.message.endsWith("received undefined");
        issues.push({
          index,
          field,
          message: missing ? `${field} is required` : `${field}: ${issue.message}`,
        });
      }
      return;
    }
    // Pass-through keys are not typed, but a number JSON could not represent (1e400 → Infinity) would
    // be stored as null: refuse it like the typed fields do.
    const infinite = nonFinitePath(candidate);
    if (infinite !== null) {
      issues.push({ index, field: infinite, message: `${infinite}: numbers must be finite` });
      return;
    }
    let eventTimeMs = receivedAtMs;
    if (parsed.data.timestamp) {
      eventTimeMs = Date.parse(parsed.data.timestamp);
      if (eventTimeMs > receivedAtMs + MAX_FUTURE_MS) {
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
