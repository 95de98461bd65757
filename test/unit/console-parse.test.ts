/** The SQL console's pure pieces: the EXPLAIN AST reader, the canonical-text lexer, messages, CSV cuts. */
import { describe, expect, it } from "vitest";
import { AstShapeError, parseExplainAst } from "../../src/console/ast.js";
import { toAnalystMessage } from "../../src/console/errors.js";
import { cteNames, tokenize } from "../../src/console/lexer.js";
import { cutCsv } from "../../src/console/service.js";
import { checkTree } from "../../src/console/validate.js";

const tree = `SelectWithUnionQuery (children 1)
 ExpressionList (children 1)
  SelectQuery (children 2)
   ExpressionList (children 1)
    Identifier a
   TablesInSelectQuery (children 1)
    TablesInSelectQueryElement (children 1)
     TableExpression (children 1)
      TableIdentifier events (alias e)`.split("\n");

describe("parseExplainAst", () => {
  it("reads the engine's tree with every node's children", () => {
    const root = parseExplainAst(tree);
    expect(root.type).toBe("SelectWithUnionQuery");
    const table = root.children[0]!.children[0]!.children[1]!.children[0]!.children[0]!.children[0]!;
    expect(table).toEqual({ type: "TableIdentifier", text: "events (alias e)", children: [] });
    expect(checkTree(root, new Set())).toEqual(["events"]);
  });

  it("refuses a tree whose lines do not add up (a name that forged lines)", () => {
    const forged = [...tree.slice(0, 5), "     TableIdentifier system.users", ...tree.slice(5)];
    expect(() => parseExplainAst(forged)).toThrow(AstShapeError);
    expect(() => parseExplainAst([...tree, "SelectWithUnionQuery"])).toThrow(AstShapeError);
    expect(() => parseExplainAst(tree.slice(0, -1))).toThrow(AstShapeError);
  });
});

describe("lexer", () => {
  it("decodes quoted names and strings and finds CTE names", () => {
    const tokens = tokenize(
      "WITH `a\\`b` AS (SELECT 'x\\'y'), c AS ((SELECT 1)), 1 AS d SELECT * FROM `a\\`b`",
    );
    const text = "WITH `a\\`b` AS (SELECT 'x\\'y'), c AS ((SELECT 1)), 1 AS d SELECT * FROM `a\\`b`";
    expect(tokens).toContainEqual({ kind: "quoted", value: "a`b", start: 5, end: 11 });
    expect(tokens).toContainEqual({ kind: "string", value: "x'y", start: 23, end: 29 });
    // Positions cover the token with its quotes: slicing the text gives it back as written.
    for (const t of tokens)
      if (t.kind !== "quoted" && t.kind !== "string") expect(text.slice(t.start, t.end)).toBe(t.value);
    expect(text.slice(5, 11)).toBe("`a\\`b`");
    expect([...cteNames(tokens)].sort()).toEqual(["a`b", "c"]);
  });
});

describe("toAnalystMessage", () => {
  it("puts analyst names back and drops the database, the console database and scopes", () => {
    const text =
      "Code: 47. DB::Exception: Unknown expression identifier `x` in scope SELECT x FROM pxh.ad_metrics_daily FINAL WHERE pixel_id = {pxh_pixel:String}. Maybe you meant pxh_console.identity_links? (UNKNOWN_IDENTIFIER)";
    const out = toAnalystMessage(text, ["pxh", "pxh_console"]);
    expect(out).toBe("Unknown expression identifier `x`. (UNKNOWN_IDENTIFIER)");
    expect(toAnalystMessage("Table pxh.identity_links does not exist", ["pxh", "pxh_console"])).toBe(
      "Table identities does not exist",
    );
  });
});

describe("cutCsv", () => {
  it("cuts after the header and `limit` records, respecting quoted newlines", () => {
    const csv = '"a"\n"x\ny"\n"2"\n"3"\n';
    expect(cutCsv(csv, 2)).toEqual({ csv: '"a"\n"x\ny"\n"2"\n', rowCount: 2, truncated: true });
    expect(cutCsv(csv, 3)).toEqual({ csv, rowCount: 3, truncated: false });
    expect(cutCsv('"a"\n', 5)).toEqual({ csv: '"a"\n', rowCount: 0, truncated: false });
  });
});
