import type { z } from "zod";
import { type FieldIssue, ValidationError } from "../errors.js";

/** zod 4 keeps no input on issues; its message says when the value was absent. */
export function isMissing(issue: z.core.$ZodIssue): boolean {
  return issue.code === "invalid_type" && issue.message.endsWith("received undefined");
}

/** `field is required` or `field: what is wrong`, the wording every validation error uses. */
export function describeIssue(field: string, issue: z.core.$ZodIssue): string {
  return isMissing(issue) ? `${field} is required` : `${field}: ${issue.message}`;
}

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
    out.push({ message: describeIssue(key || "body", issue), key, path: base });
  }
  return out;
}

export function parseWith<T>(schema: z.ZodType<T>, value: unknown, prefix: (string | number)[] = []): T {
  const r = schema.safeParse(value);
  if (r.success) return r.data;
  throw new ValidationError(toFieldIssues(r.error, prefix));
}
