import type { QueryOptions, WarehouseStore } from "../stores/warehouse/port.js";
import { type AstNode, AstShapeError, parseExplainAst, walk } from "./ast.js";
import { fromEngine, SqlRefusedError } from "./errors.js";
import { REFUSED_FUNCTIONS } from "./function-list.js";
import { checkFunction, similarFunctions } from "./functions.js";
import { cteNames, LexError, type Token, tokenize } from "./lexer.js";
import { ANALYST_NAMES, ANALYST_TABLES } from "./tables.js";

/**
 * Layer 1: the engine parses the text (its own parser, `formatQuery` then `EXPLAIN AST`) and the tree
 * is checked here. Only one SELECT / WITH / UNION query over analyst tables passes. The checked text
 * is the engine's canonical form, and that exact text is what runs.
 */
export interface ValidatedSql {
  /** The engine's one-line rendering of the query: comments gone, names quoted canonically. */
  canonical: string;
  /** Analyst tables and CTE names the query reads. */
  tables: string[];
}

const SELECT_KINDS = new Set([
  "SelectWithUnionQuery",
  "SelectQuery",
  "SelectIntersectExceptQuery",
  "TablesInSelectQuery",
]);
const IN_FUNCTIONS = new Set([
  "in",
  "notin",
  "globalin",
  "globalnotin",
  "nullin",
  "notnullin",
  "globalnullin",
  "globalnotnullin",
]);
/**
 * Virtual columns of `system.one`, the table a query without FROM reads: they name the engine's own
 * database and table.
 */
const SERVER_COLUMNS = new Set(["_database", "_table"]);
/** Functions that take an aggregate function's name as a string: that name is checked like a call. */
const NAMES_AN_AGGREGATE = new Set(["arrayReduce", "arrayReduceInRanges", "initializeAggregation"]);

const DICTIONARIES = REFUSED_FUNCTIONS.dictionaries!.why;

const ANALYST_LIST = ANALYST_TABLES.map((t) => t.name).join(", ");

const hasControlCharacter = (s: string) =>
  [...s].some((c) => c.charCodeAt(0) < 32 || c.charCodeAt(0) === 127);

/** `name (alias x)` → `name`. */
const stripAlias = (text: string) => text.replace(/ \(alias .*\)$/, "");

export async function validateSql(
  engine: WarehouseStore,
  sql: string,
  options: QueryOptions,
  databases: readonly string[],
  /** Names readable beside the analyst tables (emulated metadata tables the caller binds as CTEs). */
  extraTables: readonly string[] = [],
): Promise<ValidatedSql> {
  const canonical = await canonicalize(engine, sql, options, databases);
  const tokens = lex(canonical);
  checkLeadingKeyword(tokens);
  checkTopLevelClauses(tokens);
  for (let i = 0; i + 2 < tokens.length; i++) {
    const [open, name, colon] = [tokens[i]!, tokens[i + 1]!, tokens[i + 2]!];
    // `{name:Type}`: the engine would substitute whatever its session holds under that name.
    if (open.value === "{" && open.kind === "punct" && name.kind !== "string" && colon.value === ":")
      throw new SqlRefusedError("query parameters ({name:Type}) are not supported");
  }
  for (const t of tokens) {
    // EXPLAIN AST prints names raw: a control character in one could forge tree lines.
    if (t.kind === "quoted" && hasControlCharacter(t.value))
      throw new SqlRefusedError("identifiers may not contain control characters (newlines, tabs…)");
  }
  const tree = await explain(engine, canonical, options, databases);
  const tables = checkTree(tree, new Set([...cteNames(tokens), ...extraTables]));
  return { canonical, tables };
}

export async function canonicalize(
  engine: WarehouseStore,
  sql: string,
  options: QueryOptions,
  databases: readonly string[],
): Promise<string> {
  if (sql.includes("\0")) throw new SqlRefusedError("the query contains a NUL character");
  let text: string;
  try {
    // The text travels as a bound value: nothing of it is ever executed by this step.
    ({ text } = await engine.queryText(
      "SELECT formatQuerySingleLine({pxh_sql:String})",
      { pxh_sql: sql },
      { ...options, format: "JSONCompactEachRow" },
    ));
  } catch (err) {
    const mapped = fromEngine(err, databases);
    if (mapped instanceof Error && /Multi-statements are not allowed/i.test(mapped.message))
      throw new SqlRefusedError("exactly one statement is allowed (found more than one)");
    throw mapped;
  }
  const row = JSON.parse(text.trim()) as [string];
  return row[0];
}

function lex(canonical: string): Token[] {
  try {
    return tokenize(canonical);
  } catch (err) {
    if (err instanceof LexError) throw new SqlRefusedError("the query could not be read");
    throw err;
  }
}

function checkLeadingKeyword(tokens: readonly Token[]): void {
  const first = tokens[0];
  if (first?.kind === "punct" && first.value === "(") return;
  const word = first?.kind === "word" ? first.value.toUpperCase() : "";
  if (word === "SELECT" || word === "WITH") return;
  throw new SqlRefusedError(
    `only SELECT queries (SELECT, WITH … SELECT, UNION) are allowed; this is a ${word || "statement"} statement`,
  );
}

/** INTO OUTFILE is refused before the text ever reaches EXPLAIN. */
function checkTopLevelClauses(tokens: readonly Token[]): void {
  for (let i = 0; i + 1 < tokens.length; i++) {
    const a = tokens[i]!;
    const b = tokens[i + 1]!;
    if (
      a.kind === "word" &&
      b.kind === "word" &&
      a.value.toUpperCase() === "INTO" &&
      b.value.toUpperCase() === "OUTFILE"
    )
      throw new SqlRefusedError("INTO OUTFILE is not allowed (results come back in the response)");
  }
}

async function explain(
  engine: WarehouseStore,
  canonical: string,
  options: QueryOptions,
  databases: readonly string[],
): Promise<AstNode> {
  let text: string;
  try {
    // No settings here: an adapter that sends them as a SETTINGS clause would put one into the tree.
    // EXPLAIN AST only parses; nothing is read.
    ({ text } = await engine.queryText(`EXPLAIN AST ${canonical}`, undefined, {
      ...(options.signal ? { signal: options.signal } : {}),
      format: "JSONCompactEachRow",
    }));
  } catch (err) {
    const mapped = fromEngine(err, databases);
    if (
      mapped instanceof Error &&
      /Substitution .* is not set|Query parameter .* was not set/i.test(mapped.message)
    )
      throw new SqlRefusedError("query parameters ({name:Type}) are not supported");
    throw mapped;
  }
  const lines: string[] = [];
  for (const line of text.split("\n")) if (line) lines.push((JSON.parse(line) as [string])[0]);
  try {
    return parseExplainAst(lines);
  } catch (err) {
    if (err instanceof AstShapeError)
      throw new SqlRefusedError(`the query could not be checked (${err.message})`);
    throw err;
  }
}

/** Returns the analyst tables and CTE names referenced; throws on the first refused construct. */
export function checkTree(root: AstNode, ctes: ReadonlySet<string>): string[] {
  if (root.type !== "SelectWithUnionQuery")
    throw new SqlRefusedError(`only SELECT queries are allowed (got ${root.type})`);
  if (root.children.length > 1) {
    const extra = root.children[1]!;
    if (extra.type === "Identifier")
      throw new SqlRefusedError("FORMAT clauses are not allowed (use the `format` field)");
    if (extra.type === "Literal") throw new SqlRefusedError("INTO OUTFILE is not allowed");
    throw new SqlRefusedError(`a clause after the query is not allowed (${extra.type})`);
  }
  const used = new Set<string>();
  const table = (raw: string) => {
    const name = stripAlias(raw);
    checkTableName(name, ctes);
    used.add(name);
  };
  for (const { node } of walk(root)) {
    if (node.type === "Set") throw new SqlRefusedError("SETTINGS clauses are not allowed");
    if (node.type === "QueryParameter")
      throw new SqlRefusedError("query parameters ({name:Type}) are not supported");
    if (node.type.startsWith("Explain")) throw new SqlRefusedError("EXPLAIN is not allowed");
    if (/Query$/.test(node.type) && !SELECT_KINDS.has(node.type))
      throw new SqlRefusedError(`only SELECT queries are allowed (got ${node.type.replace(/Query$/, "")})`);
    if (node.type === "TableIdentifier") table(node.text);
    if (node.type === "TableExpression") {
      const source = node.children[0];
      if (source?.type === "Function") {
        throw new SqlRefusedError(
          `table function ${stripAlias(source.text)}() is not allowed; only the analyst tables can be read (${ANALYST_LIST})`,
        );
      }
      if (source && source.type !== "TableIdentifier" && source.type !== "Subquery")
        throw new SqlRefusedError(`unsupported table expression ${source.type}`);
    }
    // The transformer's function is not in the tree EXPLAIN AST prints, so it could not be checked.
    if (node.type === "ColumnsApplyTransformer")
      throw new SqlRefusedError("APPLY(…) is not allowed; call the function on the columns by name");
    if (node.type === "Identifier") checkIdentifier(stripAlias(node.text));
    if (node.type === "Literal") checkTypeNames(node.text);
    if (node.type === "Function") {
      const written = stripAlias(node.text);
      const resolved = checkWrittenFunction(written);
      if (NAMES_AN_AGGREGATE.has(resolved)) checkNamedAggregate(written, node);
      if (IN_FUNCTIONS.has(resolved.toLowerCase())) {
        const rhs = node.children[0]?.children[1];
        // `x IN name` reads the table `name`: the same rules as FROM.
        if (rhs?.type === "Identifier") table(rhs.text);
        if (rhs?.type === "Function") {
          const fn = stripAlias(rhs.text).toLowerCase();
          if (fn !== "tuple" && fn !== "array")
            throw new SqlRefusedError(`IN over ${stripAlias(rhs.text)}() is not allowed; use a subquery`);
        }
      }
    }
  }
  return [...used];
}

/** Returns the function's name as the engine resolves it; throws unless it is an allowed one. */
function checkWrittenFunction(written: string): string {
  const check = checkFunction(written);
  if (check.verdict === "allowed") return check.name;
  if (written.toLowerCase().startsWith("dict") || (check.verdict === "refused" && check.why === DICTIONARIES))
    throw new SqlRefusedError(`dictionaries are not available (${written})`);
  if (check.verdict === "refused") {
    const as = check.name === written ? "" : ` (${check.name})`;
    throw new SqlRefusedError(`function ${written}()${as} is not allowed in the console: ${check.why}`);
  }
  const similar = similarFunctions(written);
  const hint = similar.length > 0 ? `; did you mean ${similar.join(", ")}?` : "";
  throw new SqlRefusedError(`function ${written}() is not on the console's list of allowed functions${hint}`);
}

/** `arrayReduce('uniq', …)`: the name in the string is a function call like any other. */
function checkNamedAggregate(written: string, node: AstNode): void {
  const first = node.children[0]?.children[0];
  const name = first?.type === "Literal" ? /^'([A-Za-z_][A-Za-z0-9_]*)/.exec(first.text)?.[1] : undefined;
  if (!name)
    throw new SqlRefusedError(`${written}() takes the aggregate function's name as a string literal here`);
  checkWrittenFunction(name);
}

/** A type written as text (`CAST(x AS AggregateFunction(uniq, String))`) names aggregates too. */
function checkTypeNames(literal: string): void {
  for (const m of literal.matchAll(/AggregateFunction\(\s*`?([A-Za-z_][A-Za-z0-9_]*)/g))
    checkWrittenFunction(m[1]!);
}

function checkIdentifier(name: string): void {
  const column = name.slice(name.lastIndexOf(".") + 1);
  if (SERVER_COLUMNS.has(column))
    throw new SqlRefusedError(
      `${column} is not available: it names the engine's own database or table, not the analyst's data`,
    );
}

function checkTableName(name: string, ctes: ReadonlySet<string>): void {
  if (name.includes(".")) {
    const db = name.slice(0, name.indexOf(".")).toLowerCase();
    if (db === "system") throw new SqlRefusedError(`system tables are not available (${name})`);
    if (db === "information_schema")
      throw new SqlRefusedError(`information_schema is not available (${name})`);
    throw new SqlRefusedError(
      `database-qualified names are not allowed (${name}); write the analyst table name alone`,
    );
  }
  if (ANALYST_NAMES.has(name) || ctes.has(name)) return;
  const hint = ANALYST_NAMES.has(name.toLowerCase()) ? " (table names are case-sensitive)" : "";
  throw new SqlRefusedError(`unknown table ${name}${hint}; the analyst tables are ${ANALYST_LIST}`);
}
