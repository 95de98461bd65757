/**
 * Golden SQL of the query compiler: for each case of query-golden-cases.ts, the statements exactly as
 * emitted and their bound parameters, pinned in test/golden/query/<case>.sql. Any change to the
 * emitted SQL shows up as a diff of those files; a deliberate one is recorded with
 * `npx vitest run test/unit/query-golden.test.ts -u` and reviewed in the diff (docs/query.md).
 * test/integration/query-golden-engine.test.ts checks that the engine accepts every statement.
 */
import { existsSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { compileCase, GOLDEN_CASES, placeholderTypes, renderGolden } from "./query-golden-cases.js";

const GOLDEN_DIR = fileURLToPath(new URL("../golden/query/", import.meta.url));

describe("golden SQL of the query compiler", () => {
  it.each(GOLDEN_CASES.map((c) => [c.name, c] as const))("%s", async (name, c) => {
    const statements = compileCase(c);
    expect(statements.length).toBeGreaterThan(0);
    for (const s of statements) {
      // A placeholder without its value fails only when the engine runs the statement; a name with
      // two types would bind one value two ways.
      for (const [p, types] of placeholderTypes(s.sql)) {
        expect(Object.keys(s.params), `${s.source} ${s.period}: {${p}} has no value`).toContain(p);
        expect(types, `${s.source} ${s.period}: {${p}} is declared with several types`).toHaveLength(1);
      }
    }
    await expect(renderGolden(c, statements)).toMatchFileSnapshot(`${GOLDEN_DIR}${name}.sql`);
  });

  it("case names are unique file names", () => {
    const names = GOLDEN_CASES.map((c) => c.name);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^[a-z0-9-]+$/);
  });

  it("every golden file belongs to a case (delete the files of removed or renamed cases)", () => {
    // Files are written after the cases ran: on a first run there is no directory yet.
    const files = existsSync(GOLDEN_DIR) ? readdirSync(GOLDEN_DIR).filter((f) => f.endsWith(".sql")) : [];
    const expected = new Set(GOLDEN_CASES.map((c) => `${c.name}.sql`));
    expect(files.filter((f) => !expected.has(f))).toEqual([]);
  });
});
