import type { Completion } from "@codemirror/autocomplete";
import { SQLDialect } from "@codemirror/lang-sql";

/**
 * A ClickHouse flavour of CodeMirror's SQL language: the query keywords ClickHouse adds (PREWHERE,
 * FINAL, ARRAY JOIN, LIMIT BY, WITH TOTALS…), its type names, and the functions analysts reach for
 * first, highlighted and offered by completion. `"…"` and backticks quote identifiers, `'…'` strings
 * take backslash escapes, and `#` starts a comment as in clickhouse-client.
 */

const KEYWORDS = `
select from where prewhere group by order limit offset having with totals rollup cube union all distinct
intersect except as on using join inner left right full outer cross global any asof semi anti array final
sample and or not in is null like ilike between case when then else end interval desc asc nulls first last
collate fill step to exists true false if window over partition rows range unbounded preceding following
current row qualify ties fetch next only
`;

const TYPES = `
UInt8 UInt16 UInt32 UInt64 UInt128 UInt256 Int8 Int16 Int32 Int64 Int128 Int256 Float32 Float64 BFloat16
Decimal Decimal32 Decimal64 Decimal128 Decimal256 Bool String FixedString UUID Date Date32 DateTime
DateTime64 Enum8 Enum16 LowCardinality Nullable Array Tuple Map Nested IPv4 IPv6 JSON Dynamic Variant
Nothing Interval
`;

/** Aggregates and functions, offered with their names as ClickHouse spells them (case-sensitive). */
export const FUNCTIONS = `
count sum avg min max any anyLast argMin argMax uniq uniqExact uniqCombined uniqHLL12 countIf sumIf avgIf
minIf maxIf uniqIf uniqExactIf groupArray groupUniqArray groupArrayDistinct quantile quantiles
quantileExact median topK sumMap stddevPop stddevSamp varPop varSamp corr covarPop
toDate toDate32 toDateTime toDateTime64 toStartOfHour toStartOfDay toStartOfWeek toMonday
toStartOfMonth toStartOfQuarter toStartOfYear toStartOfInterval toYear toMonth toDayOfMonth toDayOfWeek
toHour toMinute toYYYYMM toYYYYMMDD toTimeZone toUnixTimestamp formatDateTime parseDateTimeBestEffort
now now64 today yesterday dateDiff dateAdd dateSub addDays addHours addMonths subtractDays
subtractMonths date_trunc toString toInt32 toInt64 toUInt32 toUInt64 toFloat64 toDecimal64 toDecimal128
toTypeName CAST round floor ceil abs greatest least intDiv modulo exp log sqrt pow
if multiIf coalesce ifNull nullIf isNull isNotNull assumeNotNull
length empty notEmpty lower upper trim trimBoth concat substring position positionCaseInsensitive
startsWith endsWith replaceAll replaceRegexpAll match extract extractAll splitByChar splitByString
like ilike lowerUTF8 upperUTF8 leftPad rightPad format
arrayJoin arrayMap arrayFilter arrayExists has hasAny hasAll indexOf arrayElement arraySort
arrayDistinct arrayConcat arraySlice arrayStringConcat length tuple tupleElement mapKeys mapValues
mapContains JSONExtract JSONExtractString JSONExtractInt JSONExtractFloat JSONExtractBool JSONHas
domain domainWithoutWWW path queryString extractURLParameter cutQueryString
rowNumberInAllBlocks row_number rank dense_rank lagInFrame leadInFrame neighbor runningDifference
`;

const words = (list: string) => list.trim().split(/\s+/);

/** ClickHouse spelling of each name by its lower-case form: `todate` → `toDate`, `uint64` → `UInt64`. */
const SPELLING = new Map([...words(TYPES), ...words(FUNCTIONS)].map((w) => [w.toLowerCase(), w]));

// The language looks words up in lower case, so the dialect lists them that way.
const lower = (list: string) => [...new Set(words(list).map((w) => w.toLowerCase()))].join(" ");

export const ClickHouse = SQLDialect.define({
  keywords: lower(KEYWORDS),
  types: lower(TYPES),
  builtin: lower(FUNCTIONS),
  backslashEscapes: true,
  hashComments: true,
  doubleQuotedStrings: false,
  identifierQuotes: '"`',
  operatorChars: "*+-%<>!=&|~^/?:",
});

/**
 * Completion of a dialect word: keywords in upper case, types and functions spelled the way ClickHouse
 * wants them (camel-case function names are case-sensitive there).
 */
export function keywordCompletion(label: string, type: string): Completion {
  if (type === "keyword") return { label: label.toUpperCase(), type: "keyword" };
  const name = SPELLING.get(label.toLowerCase()) ?? label;
  return type === "type"
    ? { label: name, type: "type", detail: "type" }
    : { label: name, type: "function", detail: "function", apply: name };
}
