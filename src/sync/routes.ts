import { z } from "zod";
import { route } from "../http/route.js";
import { RECORD_SCHEMAS } from "./schemas.js";
import type { SyncService } from "./service.js";

/** Kinds a connector pushes per pixel (FX rates are global: `pixelhouse fx import`). */
export const SYNC_KINDS = ["products", "orders", "refunds", "ad-entities", "ad-metrics"] as const;
export const SYNC_MAX_RECORDS = 1000;
export const SYNC_BODY_LIMIT = 5 * 1024 * 1024;

const syncResultSchema = z.object({
  accepted: z.number().int().describe("new records stored"),
  updated: z.number().int().describe("records that replaced an older version"),
  unchanged: z.number().int().describe("records whose stored version is the same or newer"),
  rejected: z.array(
    z.object({
      index: z.number().int(),
      errors: z.array(z.object({ field: z.string(), message: z.string() })),
    }),
  ),
});

export function syncRoutes(sync: SyncService) {
  return SYNC_KINDS.map((kind) =>
    route({
      method: "post",
      path: `/accounts/api/sync/${kind}`,
      auth: "sync:write",
      tag: "Sync",
      summary: `Upsert ${kind} from a connector (1-${SYNC_MAX_RECORDS} records, idempotent by id and version)`,
      description:
        "Each record is validated on its own: a bad record is listed in `rejected` with its index and " +
        "errors, and the others are stored. A record newer than the stored version replaces it; the same " +
        "or an older version changes nothing. Formats: docs/data-formats.md.",
      // Records are validated one by one by the service; the envelope only bounds the batch.
      body: z.strictObject({ records: z.array(z.unknown()).min(1).max(SYNC_MAX_RECORDS) }),
      bodyDoc: z.object({ records: z.array(RECORD_SCHEMAS[kind]).min(1).max(SYNC_MAX_RECORDS) }),
      bodyLimit: SYNC_BODY_LIMIT,
      bodyItems: "records",
      response: syncResultSchema,
      handler: ({ body, principal }) => sync.upsert(kind, principal.pixelId, body.records),
    }),
  );
}
