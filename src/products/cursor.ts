import { createHash } from "node:crypto";
import { ValidationError } from "../errors.js";

/**
 * The search cursor: opaque to clients, base64url JSON inside. It holds the last product id of the
 * page (keyset position: the next page starts strictly after it, so rows added meanwhile cause no
 * duplicate and no gap) and a digest of the search term, so a cursor is refused for another term.
 */

interface CursorBody {
  v: 1;
  after: string;
  q: string;
}

const digest = (q: string) => createHash("sha256").update(q, "utf8").digest("base64url").slice(0, 12);

export function encodeCursor(after: string, q: string): string {
  const body: CursorBody = { v: 1, after, q: digest(q) };
  return Buffer.from(JSON.stringify(body), "utf8").toString("base64url");
}

const invalid = (message: string) =>
  new ValidationError([{ message: `cursor: ${message}`, key: "cursor", path: ["cursor"] }]);

/** The product id to continue after; 400 for a cursor this endpoint did not issue for `q`. */
export function decodeCursor(cursor: string, q: string): string {
  let body: Partial<CursorBody>;
  try {
    if (!/^[A-Za-z0-9_-]+$/.test(cursor)) throw new Error("not base64url");
    body = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as Partial<CursorBody>;
  } catch {
    throw invalid("is not a cursor of this search; pass nextCursor as it was received");
  }
  if (body?.v !== 1 || typeof body.after !== "string" || typeof body.q !== "string") {
    throw invalid("is not a cursor of this search; pass nextCursor as it was received");
  }
  if (body.q !== digest(q)) throw invalid("belongs to another search term (q changed)");
  return body.after;
}
