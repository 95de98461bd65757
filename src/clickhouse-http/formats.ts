/**
 * Output formats this endpoint lets the engine write: a reviewed list (text, JSON, columnar and
 * binary row formats). Input formats do not apply (nothing is inserted); formats that read or write
 * files (Template, CapnProto and Protobuf with their schema files) are not on it.
 */
const FORMATS: Record<string, string> = {
  JSON: "application/json; charset=UTF-8",
  JSONStrings: "application/json; charset=UTF-8",
  JSONCompact: "application/json; charset=UTF-8",
  JSONCompactStrings: "application/json; charset=UTF-8",
  JSONColumns: "application/json; charset=UTF-8",
  JSONColumnsWithMetadata: "application/json; charset=UTF-8",
  JSONCompactColumns: "application/json; charset=UTF-8",
  JSONObjectEachRow: "application/json; charset=UTF-8",
  JSONEachRow: "application/x-ndjson; charset=UTF-8",
  JSONStringsEachRow: "application/x-ndjson; charset=UTF-8",
  JSONCompactEachRow: "application/x-ndjson; charset=UTF-8",
  JSONCompactEachRowWithNames: "application/x-ndjson; charset=UTF-8",
  JSONCompactEachRowWithNamesAndTypes: "application/x-ndjson; charset=UTF-8",
  JSONCompactStringsEachRow: "application/x-ndjson; charset=UTF-8",
  JSONCompactStringsEachRowWithNames: "application/x-ndjson; charset=UTF-8",
  JSONCompactStringsEachRowWithNamesAndTypes: "application/x-ndjson; charset=UTF-8",
  TabSeparated: "text/tab-separated-values; charset=UTF-8",
  TabSeparatedRaw: "text/tab-separated-values; charset=UTF-8",
  TabSeparatedWithNames: "text/tab-separated-values; charset=UTF-8",
  TabSeparatedWithNamesAndTypes: "text/tab-separated-values; charset=UTF-8",
  TabSeparatedRawWithNames: "text/tab-separated-values; charset=UTF-8",
  TabSeparatedRawWithNamesAndTypes: "text/tab-separated-values; charset=UTF-8",
  CSV: "text/csv; charset=UTF-8; header=absent",
  CSVWithNames: "text/csv; charset=UTF-8; header=present",
  CSVWithNamesAndTypes: "text/csv; charset=UTF-8; header=present",
  Values: "text/plain; charset=UTF-8",
  Pretty: "text/plain; charset=UTF-8",
  PrettyCompact: "text/plain; charset=UTF-8",
  PrettyCompactMonoBlock: "text/plain; charset=UTF-8",
  PrettySpace: "text/plain; charset=UTF-8",
  Vertical: "text/plain; charset=UTF-8",
  Markdown: "text/markdown; charset=UTF-8",
  Parquet: "application/octet-stream",
  Arrow: "application/octet-stream",
  ArrowStream: "application/octet-stream",
  ORC: "application/octet-stream",
  Avro: "application/octet-stream",
  RowBinary: "application/octet-stream",
  RowBinaryWithNames: "application/octet-stream",
  RowBinaryWithNamesAndTypes: "application/octet-stream",
  Native: "application/octet-stream",
  Null: "text/plain; charset=UTF-8",
};

/** ClickHouse's short names of some formats. */
const ALIASES: Record<string, string> = {
  TSV: "TabSeparated",
  TSVRaw: "TabSeparatedRaw",
  Raw: "TabSeparatedRaw",
  TSVWithNames: "TabSeparatedWithNames",
  TSVWithNamesAndTypes: "TabSeparatedWithNamesAndTypes",
  TSVRawWithNames: "TabSeparatedRawWithNames",
  TSVRawWithNamesAndTypes: "TabSeparatedRawWithNamesAndTypes",
  NDJSON: "JSONEachRow",
  JSONLines: "JSONEachRow",
};

const BY_LOWER = new Map(
  [...Object.keys(FORMATS), ...Object.keys(ALIASES)].map((n) => [n.toLowerCase(), ALIASES[n] ?? n] as const),
);

/** The format's canonical name and Content-Type, or undefined when it is not on the list. */
export function outputFormat(name: string): { name: string; contentType: string } | undefined {
  // Format names are case-sensitive in ClickHouse except for a few; accepting any case costs nothing.
  const canonical = BY_LOWER.get(name.toLowerCase());
  return canonical ? { name: canonical, contentType: FORMATS[canonical]! } : undefined;
}

export const DEFAULT_FORMAT = "TabSeparated";
export const FORMAT_NAMES = Object.keys(FORMATS);
