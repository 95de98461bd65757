import { describe, expect, it } from "vitest";
import { ValidationError } from "../../src/errors.js";
import { parseQueryString } from "../../src/http/decode.js";
import { parseJsonBody } from "../../src/shared/json.js";
import { holdsCents, toNumericText } from "../../src/shared/money.js";
import { findUnstorableText, textProblem } from "../../src/shared/text.js";

describe("textProblem", () => {
  it.each([
    ["", null],
    ["plain", null],
    ["emoji 😀 pair", null],
    ["a\u0000b", "must not contain NUL (U+0000 at character 2)"],
    ["\ud800", "must not contain a lone surrogate (U+D800 at character 1)"],
    ["ab\udc00", "must not contain a lone surrogate (U+DC00 at character 3)"],
    ["\udc00\ud800", "must not contain a lone surrogate (U+DC00 at character 1)"],
    ["😀\ud83d", "must not contain a lone surrogate (U+D83D at character 3)"],
  ])("%j → %s", (text, problem) => {
    expect(textProblem(text)).toBe(problem);
  });
});

describe("findUnstorableText", () => {
  it("finds the first bad text in document order, keys included, with its path", () => {
    expect(findUnstorableText({ a: 1, b: [true, null, { c: "ok" }] })).toBeNull();
    expect(findUnstorableText({ a: ["ok", "x\u0000"], b: "\ud800" })).toEqual({
      path: ["a", 1],
      message: "must not contain NUL (U+0000 at character 2)",
    });
    expect(findUnstorableText({ raw: { "k\ud800": 1 } })).toEqual({
      path: ["raw", "k\ud800"],
      message: "the key must not contain a lone surrogate (U+D800 at character 2)",
    });
  });
});

describe("holdsCents", () => {
  it.each([
    [0, true],
    [-0, true],
    [0.1 + 0.2, true],
    [19.99 * 3, true],
    [12_345_678_901.2345, true],
    [70_368_744_177_663.99, true],
    [80_000_000_000_000, true],
    [Number("99999999999999.99"), false],
    [Number("-99999999999999.99"), false],
    [Number("70368744177664.02"), false],
    [Number.NaN, false],
    [Number.POSITIVE_INFINITY, false],
  ])("%d → %s", (v, holds) => {
    expect(holdsCents(v)).toBe(holds);
  });

  it("money text comes from the shortest decimal, not the binary expansion", () => {
    expect(toNumericText(70_000_000_000_000.01)).toBe("70000000000000.0100");
    expect((70_000_000_000_000.01).toFixed(4)).toBe("70000000000000.0078");
  });
});

describe("parseQueryString", () => {
  it("reads like querystring.parse: + is a space, repeated keys make an array", () => {
    expect({ ...parseQueryString("q=caf%C3%A9+noir&limit=5&t=a&t=b&flag&=x") }).toEqual({
      q: "café noir",
      limit: "5",
      t: ["a", "b"],
      flag: "",
      "": "x",
    });
    expect({ ...parseQueryString("") }).toEqual({});
  });

  it.each(["q=%FF", "q=%E0%A4%A", "q=%ED%A0%80", "q=100%", "q=%zz"])("%s is a 400 naming q", (qs) => {
    try {
      parseQueryString(qs);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).issues.map((i) => i.key)).toEqual(["q"]);
    }
  });
});

describe("parseJsonBody and UTF-8", () => {
  it("refuses bytes that are not UTF-8, naming the offset of the first bad one", () => {
    const body = Buffer.concat([
      Buffer.from('{"a":"\ufffd ok","b":"'),
      Buffer.from([0xc3, 0x28]),
      Buffer.from('"}'),
    ]);
    expect(() => parseJsonBody(body)).toThrow(
      "Malformed JSON: the body is not valid UTF-8 (invalid byte sequence at byte offset 19)",
    );
    expect(() => parseJsonBody(Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22]))).toThrow(/byte offset 1\)/);
  });

  it("keeps a U+FFFD the sender wrote", () => {
    expect(parseJsonBody(Buffer.from('{"a":"\ufffd"}'))).toEqual({ a: "\ufffd" });
  });
});
