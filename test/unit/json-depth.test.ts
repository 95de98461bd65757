/**
 * The nesting check that runs on every JSON body before it is parsed. It skips strings by jumping to
 * the next quote, so what matters is where a string ends: a quote closes it unless an odd run of
 * backslashes precedes it. Worked examples:
 *   {"a":"x\\"}        the string is `x\` (two backslashes: an escaped backslash), then `}` → depth 1
 *   {"a":"\"[[[["}     an escaped quote inside: the brackets are text → depth 1
 *   ["\\\"]"]          three backslashes then a quote: still inside the string → depth 1
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { jsonDepthExceeds } from "../../src/shared/json.js";

/** The plain definition, one character at a time: the reference the fast scan must agree with. */
function reference(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") {
      if (++depth > max) return true;
    } else if (c === "}" || c === "]") depth--;
  }
  return false;
}

describe("jsonDepthExceeds", () => {
  it.each([
    ['{"a":"x\\\\"}', 1],
    ['{"a":"\\"[[[["}', 1],
    ['["\\\\\\"]"]', 1],
    ['[[{"k":[1,"]]]"]}]]', 4],
    ['"[[[[', 0],
  ])("%s nests %i deep", (text, depth) => {
    expect(jsonDepthExceeds(text, depth)).toBe(false);
    if (depth > 0) expect(jsonDepthExceeds(text, depth - 1)).toBe(true);
  });

  it("agrees with the character-by-character definition on any text", () => {
    const piece = fc.constantFrom("{", "}", "[", "]", '"', "\\", "a", ":", ",", "\\\\", '\\"');
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), fc.integer({ min: 0, max: 4 }), (pieces, max) => {
        const text = pieces.join("");
        expect(jsonDepthExceeds(text, max)).toBe(reference(text, max));
      }),
      { numRuns: 3000 },
    );
  });

  it("agrees on real bodies", () => {
    const body = JSON.stringify({
      events: Array.from({ length: 50 }, (_, i) => ({
        name: "purchase",
        properties: { note: `quote " and \\ and [${i}]`, items: [{ id: `v${i}`, tags: ["a", "b"] }] },
      })),
    });
    for (const max of [2, 3, 4, 5, 64]) expect(jsonDepthExceeds(body, max)).toBe(reference(body, max));
  });
});
