import type { Response } from "express";
import { z } from "zod";
import { assertPixelMatches } from "../http/mount.js";
import { route } from "../http/route.js";
import { DEFAULT_ROW_LIMIT, MAX_ROW_LIMIT, MAX_SQL_LENGTH } from "./limits.js";
import type { ConsoleService, CsvStats } from "./service.js";

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

/**
 * A CSV result that ends within its first 64 KiB is sent whole, with its row count and truncation in
 * headers; a longer one is streamed as the engine produces it, and those come as HTTP trailers.
 */
const CSV_HEAD_BYTES = 64 * 1024;
const CSV_TRAILERS = ["x-row-count", "x-truncated", "x-elapsed-ms"];

/** Resolves when `res` can take more, or is closed. */
function drained(res: Response): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off("drain", done);
      res.off("close", done);
      resolve();
    };
    res.on("drain", done);
    res.on("close", done);
  });
}

/**
 * CSV: nothing is sent until the first 64 KiB (or the end) is there, so a query that fails early
 * answers a clean 400 `{message}`. Once streaming, a failure can no longer change the status: the
 * connection is reset, so the client sees a broken download rather than a short file that looks whole.
 */
async function sendCsv(
  console: ConsoleService,
  pixelId: string,
  body: z.infer<typeof sqlRequest>,
  res: Response,
  signal: AbortSignal,
): Promise<undefined> {
  const limit = body.limit ?? DEFAULT_ROW_LIMIT;
  let head: Uint8Array[] = [];
  let headBytes = 0;
  let streaming = false;
  const start = (extra: Record<string, string>) => {
    res.status(200);
    res.setHeader("content-type", "text/csv; charset=utf-8");
    res.setHeader("content-disposition", 'attachment; filename="query.csv"');
    res.setHeader("x-row-limit", String(limit));
    for (const [name, value] of Object.entries(extra)) res.setHeader(name, value);
  };
  const sink = {
    async write(chunk: Uint8Array) {
      if (!streaming) {
        head.push(chunk);
        headBytes += chunk.length;
        if (headBytes < CSV_HEAD_BYTES) return;
        streaming = true;
        start({ trailer: CSV_TRAILERS.join(", ") });
        for (const part of head) res.write(part);
        head = [];
        return;
      }
      if (!res.write(chunk)) await drained(res);
    },
  };
  let stats: CsvStats;
  try {
    stats = await console.streamCsv(pixelId, body, sink, signal);
  } catch (err) {
    if (signal.aborted) return undefined; // the caller is gone: nobody to answer
    if (!streaming) throw err;
    res.destroy();
    return undefined;
  }
  const counts = {
    "x-row-count": String(stats.rowCount),
    "x-truncated": String(stats.truncated),
    "x-elapsed-ms": stats.elapsedMs.toFixed(1),
  };
  if (streaming) {
    res.addTrailers(counts);
  } else {
    start(counts);
    for (const part of head) res.write(part);
  }
  res.end();
  return undefined;
}

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
        "engine errors answer 400 `{message}`. `format: csv` answers text/csv with the applied limit in " +
        "`x-row-limit`; the row count and truncation come in `x-row-count` and `x-truncated`, as headers when " +
        "the result fits in 64 KiB, else as HTTP trailers after the streamed body. A result larger than " +
        "CONSOLE_MAX_RESULT_BYTES (64 MiB) answers 400. 429 / 503 with Retry-After " +
        "when no reader frees up in time. See docs/sql-console.md.",
      body: sqlRequest,
      bodyLimit: 256 * 1024,
      rateLimit: "query",
      response: sqlResponse,
      produces: "text/csv",
      responses: {
        "400": "refused by the console or failed in the engine: `{message}`",
        "429":
          "the key's query rate limit, or this pixel already runs CONSOLE_READERS_PER_PIXEL console queries; retry after Retry-After",
        "503": "every console reader is busy with other pixels' queries; retry after Retry-After",
      },
      handler: async ({ body, principal, res }) => {
        assertPixelMatches(body.pixelId, principal);
        // A caller that goes away (tab closed, request aborted) stops its query in the engine and
        // frees its reader, rather than holding it to the time limit.
        const gone = new AbortController();
        res.on("close", () => {
          if (!res.writableFinished) gone.abort();
        });
        if (body.format === "csv") return sendCsv(console, principal.pixelId, body, res, gone.signal);
        try {
          const answer = await console.run(principal.pixelId, body, gone.signal);
          res.status(200).type("application/json").send(answer.body);
          return undefined;
        } catch (err) {
          if (gone.signal.aborted) return undefined;
          throw err;
        }
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
