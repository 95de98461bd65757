/**
 * Email identifiers are stored and matched only as hashes: raw addresses never reach the warehouse.
 * Normalization (trim + lower-case) is the one ad platforms use, so the hash can be forwarded as is.
 */
import { hash } from "node:crypto";

/** Hex SHA-256 of the trimmed, lower-cased address; null when the value cannot be an address. */
export function hashEmail(email: string): string | null {
  const normalized = email.trim().toLowerCase();
  if (!normalized.includes("@")) return null;
  // One-shot hashing: ~3× cheaper than a Hash object per address (every order and email event).
  return hash("sha256", normalized, "hex");
}
