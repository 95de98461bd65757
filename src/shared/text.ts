/**
 * Text the stores cannot hold as sent. Postgres refuses U+0000 in `text` and `jsonb` (the statement
 * fails), and a lone UTF-16 surrogate has no UTF-8 form, so it would reach either store altered or not
 * at all. Such text is refused with a 400 naming the field, never stored changed.
 */

const hex = (code: number) => `U+${code.toString(16).toUpperCase().padStart(4, "0")}`;

/** Why `s` cannot be stored, or null. Positions count UTF-16 units from 1, like the account-name rules. */
export function textProblem(s: string): string | null {
  const nul = s.indexOf("\u0000");
  if (nul >= 0) return `must not contain NUL (U+0000 at character ${nul + 1})`;
  if (s.isWellFormed()) return null;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = s.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        i++;
        continue;
      }
    } else if (c < 0xdc00 || c > 0xdfff) continue;
    return `must not contain a lone surrogate (${hex(c)} at character ${i + 1})`;
  }
  return null;
}

export interface TextIssue {
  /** Keys and array indexes from the value's root. */
  path: (string | number)[];
  message: string;
}

/**
 * The first unstorable text anywhere in a JSON value, keys included (a bad key is reported at its own
 * path). Depth-first in document order, so the answer is the same for the same input.
 */
export function findUnstorableText(value: unknown, path: (string | number)[] = []): TextIssue | null {
  // Every record of a sync and every event goes through here and nearly all are fine: a walk that
  // builds no paths answers for them, and only a value with a problem is walked again for its path.
  return storable(value) ? null : locate(value, path);
}

const storableText = (s: string) => s.indexOf("\u0000") < 0 && s.isWellFormed();

function storable(value: unknown): boolean {
  if (typeof value === "string") return storableText(value);
  if (value === null || typeof value !== "object") return true;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) if (!storable(value[i])) return false;
    return true;
  }
  for (const k of Object.keys(value)) {
    if (!storableText(k) || !storable((value as Record<string, unknown>)[k])) return false;
  }
  return true;
}

function locate(value: unknown, path: (string | number)[]): TextIssue | null {
  if (typeof value === "string") {
    const problem = textProblem(value);
    return problem ? { path, message: problem } : null;
  }
  if (value === null || typeof value !== "object") return null;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = locate(value[i], [...path, i]);
      if (found) return found;
    }
    return null;
  }
  for (const [k, v] of Object.entries(value)) {
    const keyProblem = textProblem(k);
    if (keyProblem) return { path: [...path, k], message: `the key ${keyProblem}` };
    const found = locate(v, [...path, k]);
    if (found) return found;
  }
  return null;
}
