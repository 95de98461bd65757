import { stringify } from "csv-stringify/sync";
import type { ChannelAnswerBody, CohortAnswerBody, QueryAnswerBody } from "./responses.js";

/**
 * The query answers as one flat table, for spreadsheets, Power BI and Grafana's JSON/CSV sources:
 * one row per time bucket × dimension value (per entity for channel details, per cohort × period for
 * cohorts), a column per measure. Compare-period values sit in the same row as `compare.<column>`,
 * matched by bucket position. Column names are stable: `dt`, `start`, `end`, each dimension's field
 * name, each measure's key, then the `compare.` columns (docs/query.md, "Tabular output").
 */
export interface Table {
  columns: string[];
  rows: Record<string, string | number | null>[];
}

type Row = Record<string, string | number | null>;

const BUCKET = ["dt", "start", "end"];

/** A general or attribution answer as a table. */
export function queryTable(body: QueryAnswerBody, measures: readonly string[]): Table {
  const results = body.results ?? [];
  const dims = Object.keys(results[0]?.dimensionValues ?? {});
  const hasCompare = results.some((r) => r.data.compare.length > 0);
  const columns = [
    ...BUCKET,
    ...dims,
    ...measures,
    ...(hasCompare ? [...BUCKET, ...measures].map((c) => `compare.${c}`) : []),
  ];
  const rows: Row[] = [];
  for (const r of results) {
    const n = Math.max(r.data.primary.length, r.data.compare.length);
    for (let i = 0; i < n; i++) {
      const p = r.data.primary[i];
      const c = r.data.compare[i];
      const row: Row = {};
      for (const k of BUCKET) row[k] = p?.[k] ?? null;
      for (const d of dims) row[d] = r.dimensionValues?.[d] ?? "";
      for (const m of measures) row[m] = p?.[m] ?? null;
      if (hasCompare) for (const k of [...BUCKET, ...measures]) row[`compare.${k}`] = c?.[k] ?? null;
      rows.push(row);
    }
  }
  return { columns, rows };
}

const BASIC = [
  "id",
  "resourceName",
  "resourceSource",
  "level",
  "status",
  "accountId",
  "campaignId",
  "adsetId",
  "currency",
  "dailyBudget",
  "budgetRemaining",
  "amountSpent",
  "sourceCreatedAt",
  "sourceUpdatedAt",
] as const;

/** Channel details: one row per entity and bucket (one per entity without measures). */
export function channelTable(body: ChannelAnswerBody, measures: readonly string[]): Table {
  const results = body.results ?? [];
  const hasCompare = results.some((r) => r.data.compare.length > 0);
  const measured = measures.length > 0;
  const columns = [
    ...BASIC,
    ...(measured ? [...BUCKET, ...measures] : []),
    ...(hasCompare ? [...BUCKET, ...measures].map((c) => `compare.${c}`) : []),
  ];
  const rows: Row[] = [];
  for (const r of results) {
    const n = Math.max(1, r.data.primary.length, r.data.compare.length);
    for (let i = 0; i < n; i++) {
      const row: Row = {};
      for (const k of BASIC) row[k] = r.basicDetails[k];
      if (measured) {
        const p = r.data.primary[i];
        for (const k of [...BUCKET, ...measures]) row[k] = p?.[k] ?? null;
      }
      if (hasCompare) {
        const c = r.data.compare[i];
        for (const k of [...BUCKET, ...measures]) row[`compare.${k}`] = c?.[k] ?? null;
      }
      rows.push(row);
    }
  }
  return { columns, rows };
}

/** Cohorts: one row per cohort and period it reached. */
export function cohortTable(body: CohortAnswerBody, measures: readonly string[]): Table {
  const columns = ["cohort", "start", "end", "size", "period", ...measures];
  const rows: Row[] = [];
  for (const c of body.cohorts ?? []) {
    for (const p of c.periods) {
      const row: Row = { cohort: c.cohort, start: c.start, end: c.end, size: c.size, period: p.period };
      for (const m of measures) row[m] = p[m] ?? null;
      rows.push(row);
    }
  }
  return { columns, rows };
}

/** RFC 4180 CSV with a header row; an absent value is an empty field. */
export function toCsv(table: Table): string {
  return stringify(
    table.rows.map((r) => table.columns.map((c) => r[c] ?? "")),
    { header: true, columns: table.columns },
  );
}
