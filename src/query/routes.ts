import type { Request, Response } from "express";
import { z } from "zod";
import { assertPixelMatches } from "../http/mount.js";
import { route } from "../http/route.js";
import { querySeconds, since } from "../metrics.js";
import {
  type CreditedOrdersAnswer,
  creditedOrdersAnswerSchema,
  creditedOrdersTable,
} from "./credited-orders.js";
import { FAMILIES, FIELDS, OPERATORS_BY_TYPE } from "./filters/fields.js";
import { MEASURES } from "./measures.js";
import {
  answerOf,
  type ChannelAnswerBody,
  type CohortAnswerBody,
  channelAnswerSchema,
  cohortAnswerSchema,
  type QueryAnswerBody,
  queryAnswerSchema,
} from "./responses.js";
import {
  attributionQuerySchema,
  channelQuerySchema,
  cohortQuerySchema,
  creditedOrdersQuerySchema,
  explainQuerySchema,
  generalQuerySchema,
} from "./schemas.js";
import type { QueryAnswer, QueryService, RunOptions } from "./service.js";
import { channelTable, cohortTable, queryTable, type Table, toCsv } from "./tabular.js";

const measureSchema = z.object({
  key: z.string(),
  title: z.string(),
  shortTitle: z.string(),
  description: z.string(),
  category: z.string(),
  subcategory: z.string(),
  valueType: z.string(),
  formula: z.string(),
  isAverage: z.boolean(),
  isPercentage: z.boolean(),
  preferredTrendDirection: z.string(),
});

const PUBLIC_MEASURES = MEASURES.map(({ definition: _d, ...rest }) => rest);
const filtersQuery = z.strictObject({ family: z.enum(FAMILIES).optional() });

const EXPLAIN_DOC =
  "`?explain=true` answers `{explain:{statements:[{source, sources?, period, sql, params, derived?}]}}` — the generated ClickHouse SQL with its bound parameters — without running it (`sources`: a statement shared by several fact sources). When run, a statement that converts amounts and reports `fx_missing` runs once more with `rates_from` = 1970-01-01, so the explained SQL run as is may report a rate missing that the answer found. Results are cached per pixel and data version: `x-cache: hit|miss|bypass`; `Cache-Control: no-cache` runs the query again.";

type Format = "json" | "rows" | "csv";

/** `format` wins; else `Accept: text/csv` (preferred over JSON) asks for CSV. */
function formatOf(asked: Format | undefined, req: Request): Format {
  if (asked) return asked;
  return req.accepts(["application/json", "text/csv"]) === "text/csv" ? "csv" : "json";
}

function send<B>(answer: QueryAnswer, res: Response, format: Format, table: (body: B) => Table) {
  if (answer.cache !== "none") res.setHeader("x-cache", answer.cache);
  // `?explain=true` stays JSON in every format: it is SQL, not a table.
  if (format === "json" || "explain" in answer.body) return answer.body;
  // `{}` (the warehouse could not answer) is an empty table.
  const t = Object.keys(answer.body).length ? table(answer.body as B) : { columns: [], rows: [] };
  if (format === "rows") return t;
  res.type("text/csv").send(toCsv(t));
  return undefined;
}

/** The measure keys of an answer, in order (the request's when the answer has no result). */
const measuresOf = (details: { measure: string }[] | undefined, asked: readonly string[] | undefined) =>
  details?.map((d) => d.measure) ?? [...(asked ?? [])];

const noCache = (header: string | undefined) => /\bno-cache\b|\bno-store\b/i.test(header ?? "");

export function queryRoutes(queries: QueryService) {
  return [
    route({
      method: "get",
      path: "/db-mgmt/api/measures",
      auth: "any-key",
      tag: "Analytics",
      summary: "The measures catalog",
      response: z.object({ measures: z.array(measureSchema) }),
      handler: () => ({ measures: PUBLIC_MEASURES }),
    }),
    route({
      method: "get",
      path: "/db-mgmt/api/filters",
      auth: "analytics:read",
      tag: "Analytics",
      summary: "Filter fields by family, with their types and operators",
      query: filtersQuery,
      handler: ({ query }) => ({
        filters: FIELDS.filter((f) => !query.family || f.family === query.family).map((f) => ({
          field: f.field,
          family: f.family,
          type: f.type,
          operators: OPERATORS_BY_TYPE[f.type],
          description: f.description,
        })),
      }),
    }),
    queryRoute({
      path: "/db-mgmt/api/query",
      endpoint: "query",
      shape: (b) =>
        `${b.granularity === "none" ? "total" : "series"}${b.dimensions.length ? "_by_dimension" : ""}`,
      summary: "General query: measures by time bucket and dimensions",
      body: generalQuerySchema,
      response: answerOf(queryAnswerSchema),
      run: (accountId, body, opts) => queries.general(accountId, body, opts),
      table: (answer: QueryAnswerBody, body) =>
        queryTable(answer, measuresOf(answer.results[0]?.measureDetails, body.measures)),
    }),
    queryRoute({
      path: "/db-mgmt/api/query-attribution",
      endpoint: "attribution",
      shape: (b) => b.attributionModel,
      summary: "Attributed orders, revenue, spend, ROAS and CPA by a touch dimension",
      body: attributionQuerySchema,
      response: answerOf(queryAnswerSchema),
      run: (accountId, body, opts) => queries.attribution(accountId, body, opts),
      table: (answer: QueryAnswerBody, body) =>
        queryTable(answer, measuresOf(answer.results[0]?.measureDetails, body.measures)),
    }),
    queryRoute({
      path: "/db-mgmt/api/query-attribution/orders",
      endpoint: "credited_orders",
      shape: (b) => b.attributionModel,
      summary: "The latest orders credited to one value of an attribution dimension, with each order's share",
      note: "The orders behind one row of `POST /db-mgmt/api/query-attribution` (orders only), newest first.",
      body: creditedOrdersQuerySchema,
      response: answerOf(creditedOrdersAnswerSchema),
      run: (accountId, body, opts) => queries.creditedOrders(accountId, body, opts),
      table: (answer: CreditedOrdersAnswer) => creditedOrdersTable(answer),
    }),
    queryRoute({
      path: "/db-mgmt/api/query-channel-details",
      endpoint: "channel",
      shape: (b) => b.level ?? "account",
      summary: "Ad accounts, campaigns, ad sets or ads, with measures over a date range",
      note: "Budget fields of basicDetails stay in the platform's currency; only measures convert.",
      body: channelQuerySchema,
      response: answerOf(channelAnswerSchema),
      run: (accountId, body, opts) => queries.channelDetails(accountId, body, opts),
      table: (answer: ChannelAnswerBody, body) => channelTable(answer, body.measures ?? []),
    }),
    queryRoute({
      path: "/db-mgmt/api/query-cohort-analysis",
      endpoint: "cohorts",
      shape: () => "cohort",
      summary:
        "Customer cohorts by first counted order: retention, orders, revenue and cumulative LTV per period",
      body: cohortQuerySchema,
      response: answerOf(cohortAnswerSchema),
      run: (accountId, body, opts) => queries.cohorts(accountId, body, opts),
      table: (answer: CohortAnswerBody, body) => cohortTable(answer, body.measures),
    }),
  ];
}

/** The POST query endpoints share auth, rate limit, pixel check, explain and cache handling. */
function queryRoute<B extends { pixelId: string }, A>(def: {
  path: string;
  /** The metric label (a fixed word, one per endpoint). */
  endpoint: "query" | "attribution" | "cohorts" | "channel" | "credited_orders";
  /** The request's shape as a metric label: a word from a fixed set, never input. */
  shape: (body: B) => string;
  summary: string;
  note?: string;
  body: z.ZodType<B>;
  response: z.ZodType;
  run: (accountId: string, body: B, opts: RunOptions) => Promise<QueryAnswer>;
  /** The answer as one flat table (`format=rows|csv`). */
  table: (answer: A, body: B) => Table;
}) {
  return route({
    method: "post",
    path: def.path,
    auth: "analytics:read",
    tag: "Analytics",
    summary: def.summary,
    description: def.note ? `${def.note} ${EXPLAIN_DOC}` : EXPLAIN_DOC,
    body: def.body,
    response: def.response,
    query: explainQuerySchema,
    rateLimit: "query",
    handler: async ({ body, query, principal, req, res }) => {
      assertPixelMatches(body.pixelId, principal);
      const started = performance.now();
      const answer = await def.run(principal.accountId, body, {
        explain: query.explain === "true",
        bypassCache: noCache(req.get("cache-control")),
        derived: query.derived !== "false",
      });
      querySeconds.observe(
        { endpoint: def.endpoint, shape: def.shape(body), cache: answer.cache },
        since(started),
      );
      return send(answer, res, formatOf(query.format, req), (a: A) => def.table(a, body));
    },
  });
}
