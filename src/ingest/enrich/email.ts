/**
 * Email identifiers are stored and matched only as hashes: raw addresses never reach the warehouse.
 * Normalization (trim + lower-case) is the one ad platforms use, so the hash can be forwarded as is.
 */
import { createHash } from "node:crypto";

/** Hex SHA-256 of the trimmed, lower-cased address; null when the value cannot be an address. */
export function hashEmail(email: string): string | null {
  const normalized = email.trim().toLowerCase();
  if (!normalized.includes("@")) return null;
  return createHash("sha256").update(normalized, "utf8").digest("hex");
}
