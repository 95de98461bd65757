/**
 * Rows as the adapters send them: values in the first row's key order, read by a function compiled
 * per column list. Worked example: rows {a: 1, b: "x"} and {b: "y", a: 2} under columns [a, b] are
 * `[1,"x"],[2,"y"]` — the second row's own key order does not matter, and a key it lacks is null.
 */
import { describe, expect, it } from "vitest";
import { WarehouseParameterError } from "../../src/stores/warehouse/port.js";
import { compactRows, positionalRows } from "../../src/stores/warehouse/settings.js";

describe("compactRows", () => {
  it("writes every row's values in the first row's column order, missing keys as null", () => {
    const out = compactRows([
      { a: 1, b: "x", c: [1, 2], d: null },
      { b: "y", a: 2, d: { k: "v" }, c: [] },
      { a: 3 },
    ]);
    expect(out.columns).toEqual(["a", "b", "c", "d"]);
    expect(out.payload).toBe('[1,"x",[1,2],null],[2,"y",[],{"k":"v"}],[3,null,null,null]');
  });

  it("keeps column lists apart that hold the same names in another order", () => {
    expect(compactRows([{ a: 1, b: 2 }]).payload).toBe("[1,2]");
    expect(compactRows([{ b: 2, a: 1 }]).payload).toBe("[2,1]");
    expect(compactRows([{ a: 1, b: 2 }]).payload).toBe("[1,2]");
  });

  it("refuses a column name that is not an identifier", () => {
    expect(() => compactRows([{ "a b": 1 }])).toThrow(WarehouseParameterError);
    expect(() => compactRows([{ "a b": 1 }])).toThrow(/bad column name "a b"/);
  });

  it("is empty for no rows", () => {
    expect(compactRows([])).toEqual({ columns: [], payload: "" });
  });
});

describe("positionalRows", () => {
  it("reads any key as a key: quotes, line separators and code-like names stay data", () => {
    const key = '"]; globalThis.__pwned = true; //';
    const row = { [key]: 1, "a\u2028b": 2, "back\\slash": 3, __proto__x: 4 };
    const out = positionalRows([row]);
    expect(out.columns).toEqual([key, "a\u2028b", "back\\slash", "__proto__x"]);
    expect(out.values).toEqual([[1, 2, 3, 4]]);
    expect((globalThis as Record<string, unknown>).__pwned).toBeUndefined();
  });

  it("never mistakes one column list for another that joins to the same text", () => {
    expect(positionalRows([{ "a\u0000b": 1 }]).values).toEqual([[1]]);
    expect(positionalRows([{ a: 1, b: 2 }]).values).toEqual([[1, 2]]);
    expect(positionalRows([{ "a,b": 3 }]).values).toEqual([[3]]);
    expect(positionalRows([{}]).values).toEqual([[]]);
    expect(positionalRows([{ "": 5 }]).values).toEqual([[5]]);
  });

  it("stays right past the number of column lists it keeps compiled", () => {
    for (let n = 0; n < 300; n++) {
      const row = { [`c${n}`]: n, shared: `s${n}` };
      expect(positionalRows([row, { shared: "t", [`c${n}`]: -n }]).values).toEqual([
        [n, `s${n}`],
        [-n, "t"],
      ]);
    }
  });
});
