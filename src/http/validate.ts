import type { z } from "zod";
import { type FieldIssue, ValidationError } from "../errors.js";

/** zod issues → the standard `errors[]` entries, one per field (unknown keys get one entry each). */
export function toFieldIssues(error: z.ZodError, prefix: (string | number)[] = []): FieldIssue[] {
  const out: FieldIssue[] = [];
  for (const issue of error.issues) {
    const base = [...prefix, ...issue.path].map(String);
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys) {
        const path = [...base, key];
        out.push({ message: `${path.join(".")} is not allowed`, key: path.join("."), path });
      }
      continue;
    }
    const key = base.join(".");
    // zod 4 keeps no input on issues; its message says when the value was absent.
    const missing = issue.code === "invalid_type" && issue.message.endsWith("received undefined");
    const message = missing ? `${key || "body"} is required` : `${key || "body"}: ${issue.message}`;
    out.push({ message, key, path: base });
  }
  return out;
}

export function parseWith<T>(schema: z.ZodType<T>, value: unknown, prefix: (string | number)[] = []): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw new ValidationError(toFieldIssues(r.error, prefix));
}
