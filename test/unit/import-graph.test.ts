/**
 * The import graph of src/ runs one way (docs/architecture.md, "Layers"). Nodes are the folders under
 * src/ and each top-level file on its own (errors.ts, config.ts, services.ts …), so the kernel files
 * everything imports and the composition files that import everything are told apart.
 *
 * Worked example: `products/service.ts` importing `../costs/resolve.js` is an edge products → costs;
 * with `costs/recalc.ts` importing `../products/facts.js` there would be costs → products too — a
 * cycle, which this test names with the files that make each edge.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative, sep } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = join(import.meta.dirname, "../../src");

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : /\.(ts|mts)$/.test(e.name) ? [join(dir, e.name)] : [],
  );
}

const nodeOf = (file: string) => relative(SRC, file).split(sep)[0]!;

interface Edge {
  from: string;
  to: string;
  file: string;
  target: string;
}

function edges(): Edge[] {
  const out: Edge[] = [];
  for (const file of files(SRC)) {
    const text = readFileSync(file, "utf8");
    for (const m of text.matchAll(/(?:from|import)\s*\(?\s*"(\.[^"]+)"/g)) {
      const target = normalize(join(dirname(file), m[1]!));
      const from = nodeOf(file);
      const to = nodeOf(target);
      if (from !== to) out.push({ from, to, file: relative(SRC, file), target: relative(SRC, target) });
    }
  }
  return out;
}

/** Strongly connected components of more than one node (Tarjan). */
function cycles(all: Edge[]): string[][] {
  const next = new Map<string, Set<string>>();
  for (const e of all) next.set(e.from, (next.get(e.from) ?? new Set()).add(e.to));
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const found: string[][] = [];
  let n = 0;
  const visit = (v: string) => {
    index.set(v, n);
    low.set(v, n++);
    stack.push(v);
    on.add(v);
    for (const w of next.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        scc.push(w);
      } while (w !== v);
      if (scc.length > 1) found.push(scc.sort());
    }
  };
  for (const v of next.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe("src import graph", () => {
  const all = edges();

  it("has no cycle between folders (no two modules import each other, even through a third)", () => {
    const found = cycles(all).map((scc) => ({
      modules: scc,
      edges: all
        .filter((e) => scc.includes(e.from) && scc.includes(e.to))
        .map((e) => `${e.file} → ${e.target}`),
    }));
    expect(found).toEqual([]);
  });

  it("lets only routes and the app's composition import the HTTP layer", () => {
    // A route module adapts a service to HTTP; everything below it (services, stores, workers) knows
    // nothing of requests, so it can run from the CLI, a worker or a test alike.
    const allowed = (file: string) =>
      /(^|\/)routes\.ts$/.test(file) || ["app.ts", "routes.ts"].includes(file) || file.startsWith("web/");
    const offenders = all
      .filter((e) => e.to === "http" && !allowed(e.file))
      .map((e) => `${e.file} → ${e.target}`);
    expect(offenders).toEqual([]);
  });

  it("finds the edges it checks (the scan itself works)", () => {
    expect(all.some((e) => e.from === "products" && e.to === "costs")).toBe(true);
    expect(all.some((e) => e.from === "costs" && e.to === "http")).toBe(true);
  });
});
