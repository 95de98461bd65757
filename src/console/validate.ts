import type { QueryOptions, WarehouseStore } from "../stores/warehouse/port.js";
import { type AstNode, AstShapeError, parseExplainAst, walk } from "./ast.js";
import { fromEngine, SqlRefusedError } from "./errors.js";
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
/** Scalar functions that read outside the query's tables or describe the server. */
const DENIED_FUNCTIONS = new Set([
  "file",
  "hascolumnintable",
  "getsetting",
  "getsettingordefault",
  "getserversetting",
  "getmergetreesetting",
  "getmacro",
  "catboostevaluate",
  "evalmlmethod",
  "modelevaluate",
  "filesystemavailable",
  "filesystemcapacity",
  "filesystemunreserved",
  "filesystemfree",
  "filesystemtotal",
  "getclienthttpheader",
  "serveruuid",
  "getoskernelversion",
  "initialqueryid",
  "initial_query_id",
  "queryid",
  "query_id",
  "currentuser",
  "current_user",
  "user",
  "currentprofiles",
  "enabledprofiles",
  "defaultprofiles",
  "currentroles",
  "enabledroles",
  "defaultroles",
  "currentdatabase",
  "current_database",
  "database",
  "currentschemas",
  "current_schemas",
  "hostname",
  "fqdn",
  "fullhostname",
  "tcpport",
  "getserverport",
  "zookeepersessionuptime",
  "transactionid",
  "transactionlatestsnapshot",
  "transactionoldestsnapshot",
  "buildid",
  "displayname",
  "globalvariable",
  "generateserialid",
  "addresstoline",
  "addresstolinewithinlines",
  "addresstosymbol",
  "demangle",
]);
const DENIED_PREFIXES = ["dict", "joinget"];

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
  const tables = checkTree(tree, cteNames(tokens));
  return { canonical, tables };
}

async function canonicalize(
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
    if (node.type === "Function") {
      const name = stripAlias(node.text).toLowerCase();
      if (DENIED_FUNCTIONS.has(name) || DENIED_PREFIXES.some((p) => name.startsWith(p))) {
        throw new SqlRefusedError(
          name.startsWith("dict")
            ? `dictionaries are not available (${stripAlias(node.text)})`
            : `function ${stripAlias(node.text)}() is not allowed in the console`,
        );
      }
      if (IN_FUNCTIONS.has(name)) {
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
