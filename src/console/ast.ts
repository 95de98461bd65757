/**
 * The engine's own parse tree, read from `EXPLAIN AST` text. The text prints identifiers raw, so a
 * quoted name holding a newline could forge lines; every node therefore must have exactly the number
 * of children its `(children N)` announces, and anything else is refused as unreadable.
 */
export interface AstNode {
  /** `SelectQuery`, `TableIdentifier`, `Function`… */
  type: string;
  /** The rest of the line without the children count: a name, a literal, `(alias x)`. */
  text: string;
  children: AstNode[];
}

export class AstShapeError extends Error {}

const LINE = /^( *)(\S+)(?: (.*))?$/;
const CHILDREN = / ?\(children (\d+)\)$/;

/** `lines` are the rows of `EXPLAIN AST`, one node per row, indented one space per level. */
export function parseExplainAst(lines: readonly string[]): AstNode {
  const stack: { node: AstNode; depth: number; expected: number }[] = [];
  let root: AstNode | undefined;
  for (const raw of lines) {
    const count = CHILDREN.exec(raw);
    const line = count ? raw.slice(0, count.index) : raw;
    const m = LINE.exec(line);
    if (!m) throw new AstShapeError("unreadable parse tree");
    const depth = m[1]!.length;
    const node: AstNode = { type: m[2]!, text: m[3] ?? "", children: [] };
    const expected = count ? Number(count[1]) : 0;
    while (stack.length > 0 && stack[stack.length - 1]!.depth >= depth) close(stack.pop()!);
    if (stack.length === 0) {
      if (root || depth !== 0) throw new AstShapeError("the parse tree has more than one root");
      root = node;
    } else {
      const parent = stack[stack.length - 1]!;
      if (depth !== parent.depth + 1) throw new AstShapeError("unreadable parse tree");
      parent.node.children.push(node);
    }
    stack.push({ node, depth, expected });
  }
  while (stack.length > 0) close(stack.pop()!);
  if (!root) throw new AstShapeError("empty parse tree");
  return root;
}

function close(entry: { node: AstNode; expected: number }): void {
  if (entry.node.children.length !== entry.expected) throw new AstShapeError("unreadable parse tree");
}

/** Every node, parents before children. */
export function* walk(node: AstNode, parent?: AstNode): Generator<{ node: AstNode; parent?: AstNode }> {
  yield parent ? { node, parent } : { node };
  for (const child of node.children) yield* walk(child, node);
}
