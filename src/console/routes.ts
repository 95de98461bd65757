import { z } from "zod";
import { assertPixelMatches } from "../http/mount.js";
import { route } from "../http/route.js";
import { DEFAULT_ROW_LIMIT, MAX_ROW_LIMIT, MAX_SQL_LENGTH } from "./limits.js";
import type { ConsoleService } from "./service.js";

const sqlRequest = z.strictObject({
  pixelId: z.string().min(1).describe("must equal the x-pixel-id header"),
  sql: z
    .string()
    .min(1)
    .max(MAX_SQL_LENGTH)
    .describe("one ClickHouse SELECT / WITH / UNION query over the analyst tables"),
  limit: z
    .number()
    .int()
    .min(1)
    .max(MAX_ROW_LIMIT)
    .optional()
    .describe(`rows returned at most (default ${DEFAULT_ROW_LIMIT}, maximum ${MAX_ROW_LIMIT})`),
  format: z.enum(["json", "csv"]).optional().describe("json (default) or csv (text/csv with a header row)"),
});

const sqlResponse = z.object({
  columns: z.array(z.object({ name: z.string(), type: z.string().describe("ClickHouse type") })),
  rows: z.array(z.array(z.unknown())).describe("one array per row, in column order"),
  rowCount: z.number().int(),
  truncated: z.boolean().describe("true when the query had more rows than `limit`"),
  elapsedMs: z.number(),
  rowsRead: z.number().int(),
  bytesRead: z.number().int(),
  limit: z.number().int().describe("the row limit applied to this query"),
});

const schemaResponse = z.object({
  tables: z.array(
    z.object({
      name: z.string(),
      description: z.string(),
      columns: z.array(z.object({ name: z.string(), type: z.string(), description: z.string().optional() })),
    }),
  ),
});

/** Chunks of the CSV body: sent as they are written, never as one string. */
const CSV_CHUNK = 64 * 1024;

export function consoleRoutes(console: ConsoleService) {
  return [
    route({
      method: "post",
      path: "/db-mgmt/api/sql",
      auth: "analytics:read",
      tag: "SQL console",
      summary: "Run one read-only SQL query over the pixel's analyst tables",
      description:
        "ClickHouse SQL over `events`, `orders`, `order_lines`, `refunds`, `order_costs`, `ad_entities`, " +
        "`ad_metrics`, `identities`, `fx_rates`, always confined to the caller's pixel. Refused queries and " +
        "engine errors answer 400 `{message}`. `format: csv` answers text/csv with the row count, truncation " +
        "and applied limit in `x-row-count`, `x-truncated`, `x-row-limit`. See docs/sql-console.md.",
      body: sqlRequest,
      bodyLimit: 256 * 1024,
      rateLimit: "query",
      response: sqlResponse,
      produces: "text/csv",
      responses: { "400": "refused by the console or failed in the engine: `{message}`" },
      handler: async ({ body, principal, res }) => {
        assertPixelMatches(body.pixelId, principal);
        const result = await console.run(principal.pixelId, body);
        if (result.format === "json") {
          const { format: _format, ...json } = result;
          return json;
        }
        res.status(200);
        res.setHeader("content-type", "text/csv; charset=utf-8");
        res.setHeader("content-disposition", 'attachment; filename="query.csv"');
        res.setHeader("x-row-count", String(result.rowCount));
        res.setHeader("x-truncated", String(result.truncated));
        res.setHeader("x-row-limit", String(result.limit));
        res.setHeader("x-elapsed-ms", result.elapsedMs.toFixed(1));
        for (let i = 0; i < result.csv.length; i += CSV_CHUNK) res.write(result.csv.slice(i, i + CSV_CHUNK));
        res.end();
        return undefined;
      },
    }),
    route({
      method: "get",
      path: "/db-mgmt/api/sql/schema",
      auth: "analytics:read",
      tag: "SQL console",
      summary: "The analyst tables with their columns, types and descriptions",
      response: schemaResponse,
      handler: async () => ({ tables: await console.schema() }),
    }),
  ];
}
