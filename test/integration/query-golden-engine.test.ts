/**
 * Every statement pinned by the golden SQL files (test/unit/query-golden.test.ts) is accepted by the
 * engine: `EXPLAIN PLAN` of it with its parameters, on chDB with the migrations applied. EXPLAIN PLAN
 * (unlike EXPLAIN SYNTAX) resolves tables, columns, functions and types and substitutes the bound
 * parameters, so a golden file can never pin SQL that would fail when run; it reads no data.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { migrate } from "../../src/stores/migrations.js";
import type { SqlStore } from "../../src/stores/sql/port.js";
import type { Params, WarehouseStore } from "../../src/stores/warehouse/port.js";
import { type Opened, openChdb, openPglite } from "../helpers/stores.js";
import { compileCase, GOLDEN_CASES } from "../unit/query-golden-cases.js";

let wh: Opened<WarehouseStore>;
let sql: Opened<SqlStore>;

beforeAll(async () => {
  wh = await openChdb();
  sql = await openPglite();
  await migrate(sql.store, wh.store);
});
afterAll(async () => {
  await wh?.close();
  await sql?.close();
});

describe("the engine accepts every golden statement", () => {
  it.each(GOLDEN_CASES.map((c) => [c.name, c] as const))("%s", async (_name, c) => {
    const statements = compileCase(c);
    for (const [i, s] of statements.entries()) {
      const plan = await wh.store
        .queryText(`EXPLAIN PLAN ${s.sql}`, s.params as Params, { format: "TSV" })
        .catch((err: unknown) => {
          throw new Error(`statement ${i + 1} (${s.source}, ${s.period}) refused: ${(err as Error).message}`);
        });
      expect(plan.text, `statement ${i + 1}`).not.toBe("");
    }
  });
});
