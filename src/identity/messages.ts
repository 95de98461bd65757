import { z } from "zod";
import type { Alias, AliasType, Sighting } from "./union.js";

/** The bus stream the write paths publish sightings to and the identity worker consumes. */
export const IDENTITY_STREAM = "identity.observed";

const ALIAS_TYPES = ["identity", "email", "user", "store", "customer", "order", "canonical"] as const;

/**
 * One message: a pixel's sightings, each `[assigned id, type, value, type, value, …]` (compact: a
 * busy group of events carries thousands), and when the write path published it (epoch ms).
 */
const payloadSchema = z.object({
  pixelId: z.string().min(1),
  at: z.number(),
  sightings: z.array(z.array(z.string()).min(1)),
});

export interface SightingsMessage {
  pixelId: string;
  at: number;
  sightings: Sighting[];
}

/**
 * The payload of the sightings of one pixel; identical sightings are sent once. Identical sightings
 * carry the same id (rows sharing an alias share it), so a row is compared only with the rows under
 * its id, and a key is built only for an id seen twice: the rows of an import (one per order, each
 * its own id) build none.
 */
export function sightingsPayload(
  pixelId: string,
  groups: readonly (readonly Alias[])[],
  assigned: readonly string[],
): { pixelId: string; at: number; sightings: string[][] } | null {
  const underId = new Map<string, string[] | Set<string>>();
  const sightings: string[][] = [];
  for (let i = 0; i < groups.length; i++) {
    const g = groups[i]!;
    if (g.length === 0) continue;
    const id = assigned[i]!;
    const row = new Array<string>(1 + 2 * g.length);
    row[0] = id;
    for (let j = 0; j < g.length; j++) {
      row[1 + 2 * j] = g[j]!.type;
      row[2 + 2 * j] = g[j]!.value;
    }
    const before = underId.get(id);
    if (before === undefined) underId.set(id, row);
    else {
      const keys = Array.isArray(before) ? new Set([before.join("\u0000")]) : before;
      if (keys !== before) underId.set(id, keys);
      const key = row.join("\u0000");
      if (keys.has(key)) continue;
      keys.add(key);
    }
    sightings.push(row);
  }
  return sightings.length ? { pixelId, at: Date.now(), sightings } : null;
}

/** A message read back; null when it is not one (written by someone else, or malformed). */
export function parseSightings(payload: unknown): SightingsMessage | null {
  const parsed = payloadSchema.safeParse(payload);
  if (!parsed.success) return null;
  const sightings: Sighting[] = [];
  for (const row of parsed.data.sightings) {
    const [assigned, ...flat] = row;
    if (!assigned || flat.length % 2 !== 0) return null;
    const aliases: Alias[] = [];
    for (let i = 0; i < flat.length; i += 2) {
      const type = flat[i] as AliasType;
      if (!(ALIAS_TYPES as readonly string[]).includes(type)) return null;
      aliases.push({ type, value: flat[i + 1]! });
    }
    sightings.push({ assigned, aliases });
  }
  return { pixelId: parsed.data.pixelId, at: parsed.data.at, sightings };
}
