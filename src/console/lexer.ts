/**
 * Tokens of the engine's canonical text (`formatQuery` output: no comments, identifiers bare or in
 * backquotes, strings in single quotes, both with backslash escapes). Used only for what `EXPLAIN AST`
 * does not print: the names of CTEs, and the raw content of quoted identifiers.
 */
export type Token = (
  | { kind: "word"; value: string }
  | { kind: "quoted"; value: string }
  | { kind: "string"; value: string }
  | { kind: "punct"; value: string }
) & {
  /** Where the token starts and ends in the text (end exclusive), quotes included. */
  start: number;
  end: number;
};

export class LexError extends Error {}

const ESCAPES: Record<string, string> = {
  n: "\n",
  t: "\t",
  r: "\r",
  "0": "\0",
  b: "\b",
  f: "\f",
  a: "\x07",
  v: "\v",
};

function readQuoted(text: string, start: number, quote: string): { value: string; end: number } {
  let value = "";
  let i = start + 1;
  while (i < text.length) {
    const c = text[i]!;
    if (c === "\\") {
      const next = text[i + 1];
      if (next === undefined) break;
      if (next === "x" && /^[0-9a-fA-F]{2}$/.test(text.slice(i + 2, i + 4))) {
        value += String.fromCharCode(Number.parseInt(text.slice(i + 2, i + 4), 16));
        i += 4;
        continue;
      }
      value += ESCAPES[next] ?? next;
      i += 2;
      continue;
    }
    if (c === quote) {
      if (text[i + 1] === quote) {
        value += quote;
        i += 2;
        continue;
      }
      return { value, end: i + 1 };
    }
    value += c;
    i++;
  }
  throw new LexError("unterminated quoted text");
}

export function tokenize(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (/\s/.test(c)) {
      i++;
    } else if (c === "'") {
      const { value, end } = readQuoted(text, i, "'");
      tokens.push({ kind: "string", value, start: i, end });
      i = end;
    } else if (c === "`" || c === '"') {
      const { value, end } = readQuoted(text, i, c);
      tokens.push({ kind: "quoted", value, start: i, end });
      i = end;
    } else if (/[A-Za-z_]/.test(c)) {
      const m = /^[A-Za-z_][A-Za-z0-9_$]*/.exec(text.slice(i, i + 256))!;
      tokens.push({ kind: "word", value: m[0], start: i, end: i + m[0].length });
      i += m[0].length;
    } else {
      tokens.push({ kind: "punct", value: c, start: i, end: i + 1 });
      i++;
    }
  }
  return tokens;
}

const isName = (t: Token | undefined): t is Extract<Token, { kind: "word" | "quoted" }> =>
  t !== undefined && (t.kind === "word" || t.kind === "quoted");
const isWord = (t: Token | undefined, w: string) =>
  t !== undefined && t.kind === "word" && t.value.toUpperCase() === w;

/**
 * Names defined as `name AS (subquery)` in any WITH list. Scope is ignored on purpose: a name taken
 * for a CTE outside its scope resolves in the console's empty database, where nothing can be read.
 */
export function cteNames(tokens: readonly Token[]): Set<string> {
  const names = new Set<string>();
  for (let i = 1; i + 3 < tokens.length; i++) {
    const prev = tokens[i - 1]!;
    const name = tokens[i];
    if (!(isWord(prev, "WITH") || isWord(prev, "RECURSIVE") || (prev.kind === "punct" && prev.value === ",")))
      continue;
    if (!isName(name) || !isWord(tokens[i + 1], "AS")) continue;
    const open = tokens[i + 2]!;
    const first = tokens[i + 3]!;
    if (open.kind !== "punct" || open.value !== "(") continue;
    if (isWord(first, "SELECT") || isWord(first, "WITH") || (first.kind === "punct" && first.value === "("))
      names.add(name.value);
  }
  return names;
}
