import { describe, expect, it } from "vitest";
import { accountNameProblem } from "../../src/accounts/account-name.js";
import { renameAccountSchema } from "../../src/accounts/schemas.js";
import { ValidationError } from "../../src/errors.js";
import { parseWith } from "../../src/shared/validate.js";

const ok: [string, string][] = [
  ["ASCII letters and a space", "Acme Shop"],
  ["one character", "A"],
  ["100 ASCII characters", "a".repeat(100)],
  ["100 emoji (200 UTF-16 units, 100 code points)", "😀".repeat(100)],
  ["Latin with diacritics (precomposed)", "Café Zürich"],
  ["combining mark (decomposed é)", "Cafe\u0301"],
  ["Greek", "Ελληνικά"],
  ["Cyrillic", "Магазин"],
  ["CJK", "東京ストア"],
  ["Hangul", "서울상점"],
  ["Arabic letters (right-to-left script, no controls)", "متجر"],
  ["Hebrew", "חנות"],
  ["Devanagari with vowel signs (marks)", "दुकान"],
  ["Thai", "ร้านค้า"],
  ["digits of several scripts", "Shop 42 ٤٢ ४२"],
  ["punctuation", "Smith & Sons, Inc. — “Best” (EU)!?"],
  ["symbols: currency, math, arrows", "€$£¥ ± ∑ → ©®™"],
  ["no-break space inside", "Acme\u00A0Shop"],
  ["ideographic space inside", "東京\u3000ストア"],
  ["single emoji", "Shop 🛍"],
  ["emoji with VS16 (heart)", "I ❤️ Shop"],
  ["keycap sequence (digit + VS16 + U+20E3)", "Shop 1️⃣"],
  ["skin tone modifier", "👍🏽 Shop"],
  ["ZWJ family", "👨‍👩‍👧‍👦 Family"],
  ["ZWJ with skin tones (woman technologist)", "👩🏽‍💻 Dev"],
  ["ZWJ after VS16 (rainbow flag)", "🏳️‍🌈 Pride"],
  ["ZWJ with hair component", "👨🏻‍🦰"],
  ["ZWJ heart on fire", "❤️‍🔥"],
  ["regional indicator flag", "🇫🇷 Boutique"],
  ["emoji tag sequence (flag of England)", "🏴󠁧󠁢󠁥󠁮󠁧󠁿 Shop"],
  ["emoji newer than the runtime's tables (reserved pictographic)", "Shop \u{1FAFF}"],
  ["ideographic variation selector after a CJK ideograph", "葛\u{E0100}飾"],
  ["object replacement symbol", "Shop \uFFFC"],
];

const refused: [string, string, RegExp][] = [
  // length in code points
  ["empty", "", /must be 1 to 100 characters long \(got 0\)/],
  ["101 characters", "a".repeat(101), /got 101/],
  ["101 emoji", "😀".repeat(101), /got 101/],
  // leading / trailing White_Space, not trimmed
  [
    "leading space",
    " Acme",
    /must not start or end with whitespace \(U\+0020 at character 1\); it is not trimmed/,
  ],
  ["trailing space", "Acme ", /whitespace \(U\+0020 at character 5\)/],
  ["only a space", " ", /whitespace/],
  ["leading tab", "\tAcme", /whitespace \(U\+0009/],
  ["trailing newline", "Acme\n", /whitespace \(U\+000A/],
  ["leading no-break space", "\u00A0Acme", /whitespace \(U\+00A0/],
  ["trailing ideographic space", "Acme\u3000", /whitespace \(U\+3000/],
  ["leading en quad", "\u2000Acme", /whitespace \(U\+2000/],
  ["trailing next line (U+0085)", "Acme\u0085", /whitespace \(U\+0085/],
  ["leading ogham space mark", "\u1680Acme", /whitespace \(U\+1680/],
  // Cc
  ["NUL", "Ac\u0000me", /must not contain control characters \(U\+0000 at character 3\)/],
  ["BEL", "Acme\u0007Shop", /control characters \(U\+0007/],
  ["tab inside", "Acme\tShop", /control characters \(U\+0009/],
  ["newline inside", "Acme\nShop", /control characters \(U\+000A/],
  ["carriage return inside", "Acme\rShop", /control characters \(U\+000D/],
  ["DEL", "Acme\u007F", /control characters \(U\+007F/],
  ["C1 control (U+0080)", "Acme\u0080Shop", /control characters \(U\+0080/],
  ["C1 control (U+009F)", "Acme\u009FShop", /control characters \(U\+009F/],
  // Cf: zero-width and other format characters
  ["zero-width space", "Ac\u200Bme", /zero-width or invisible format characters \(U\+200B at character 3\)/],
  ["zero-width non-joiner", "Ac\u200Cme", /format characters \(U\+200C/],
  ["word joiner", "Ac\u2060me", /format characters \(U\+2060/],
  ["invisible times", "Ac\u2062me", /format characters \(U\+2062/],
  ["invisible plus", "Ac\u2064me", /format characters \(U\+2064/],
  ["BOM / zero-width no-break space", "\uFEFFAcme", /format characters \(U\+FEFF at character 1\)/],
  ["soft hyphen", "Ac\u00ADme", /format characters \(U\+00AD/],
  ["Mongolian vowel separator", "Ac\u180Eme", /format characters \(U\+180E/],
  ["Arabic number sign", "\u0600Acme", /format characters \(U\+0600/],
  ["interlinear annotation anchor", "Ac\uFFF9me", /format characters \(U\+FFF9/],
  ["language tag (deprecated)", "Acme\u{E0001}", /format characters \(U\+E0001/],
  ["tag letters without an emoji", "Acme\u{E0067}\u{E007F}", /format characters \(U\+E0067/],
  ["tag letters without a cancel tag", "🏴\u{E0067}\u{E0062}", /format characters \(U\+E0067/],
  ["cancel tag alone", "🏴\u{E007F}", /format characters \(U\+E007F/],
  // ZWJ only between two emoji
  [
    "ZWJ between letters",
    "Ac\u200Dme",
    /zero-width joiner only between two emoji \(U\+200D at character 3\)/,
  ],
  ["ZWJ at the start", "\u200D😀", /zero-width joiner/],
  ["ZWJ at the end", "😀\u200D", /zero-width joiner/],
  ["ZWJ emoji then letter", "😀\u200Da", /zero-width joiner/],
  ["ZWJ letter then emoji", "a\u200D😀", /zero-width joiner/],
  ["ZWJ twice", "😀\u200D\u200D😀", /zero-width joiner/],
  ["ZWJ after a digit (not pictographic)", "1\u200D😀", /zero-width joiner/],
  // bidirectional controls
  ["LRE", "Ac\u202Ame", /bidirectional control characters \(U\+202A/],
  ["RLE", "Ac\u202Bme", /bidirectional control characters \(U\+202B/],
  ["PDF", "Ac\u202Cme", /bidirectional control characters \(U\+202C/],
  ["LRO", "Ac\u202Dme", /bidirectional control characters \(U\+202D/],
  ["RLO (Trojan Source)", "Acme\u202Egnp.exe", /bidirectional control characters \(U\+202E at character 5\)/],
  ["LRI", "Ac\u2066me", /bidirectional control characters \(U\+2066/],
  ["RLI", "Ac\u2067me", /bidirectional control characters \(U\+2067/],
  ["FSI", "Ac\u2068me", /bidirectional control characters \(U\+2068/],
  ["PDI", "Ac\u2069me", /bidirectional control characters \(U\+2069/],
  ["Arabic letter mark", "متجر\u061C", /bidirectional control characters \(U\+061C/],
  ["left-to-right mark", "Ac\u200Eme", /bidirectional control characters \(U\+200E/],
  ["right-to-left mark", "Ac\u200Fme", /bidirectional control characters \(U\+200F/],
  // lone surrogates
  ["lone high surrogate", "Ac\uD83Dme", /must not contain a lone surrogate \(U\+D83D at character 3\)/],
  ["lone low surrogate", "Acme\uDE00", /lone surrogate \(U\+DE00 at character 5\)/],
  ["reversed pair", "\uDE00\uD83D", /lone surrogate \(U\+DE00 at character 1\)/],
  // variation selectors with nothing visible before them
  [
    "variation selector first",
    "\uFE0FAcme",
    /variation selector only after an emoji or other visible character/,
  ],
  ["variation selector after a space", "Acme \uFE0F!", /variation selector/],
  ["two variation selectors", "❤\uFE0F\uFE0F", /visible character \(U\+FE0F at character 3\)/],
  // separators and code points with no agreed meaning
  ["line separator", "Acme\u2028Shop", /line or paragraph separators \(U\+2028/],
  ["paragraph separator", "Acme\u2029Shop", /line or paragraph separators \(U\+2029/],
  ["private use", "Acme \uE000", /private-use characters \(U\+E000/],
  ["supplementary private use", "Acme \u{F0000}", /private-use characters \(U\+F0000/],
  ["noncharacter U+FFFF", "Acme\uFFFF", /unassigned code points \(U\+FFFF/],
  ["unassigned (U+0378)", "Acme\u0378", /unassigned code points \(U\+0378/],
];

describe("account name rules", () => {
  it.each(ok)("accepts %s", (_label, name) => {
    expect(accountNameProblem(name)).toBeUndefined();
    expect(parseWith(renameAccountSchema, { accountName: name })).toStrictEqual({ accountName: name });
  });

  it.each(refused)("refuses %s", (_label, name, reason) => {
    expect(accountNameProblem(name)).toMatch(reason);
    let thrown: unknown;
    try {
      parseWith(renameAccountSchema, { accountName: name });
    } catch (err) {
      thrown = err;
    }
    expect(thrown).toBeInstanceOf(ValidationError);
    const issues = (thrown as ValidationError).issues;
    expect(issues).toHaveLength(1);
    expect(issues[0]!.key).toBe("accountName");
    expect(issues[0]!.path).toStrictEqual(["accountName"]);
    expect(issues[0]!.message).toMatch(/^accountName: /);
    expect(issues[0]!.message).toMatch(reason);
  });

  it("counts code points, not UTF-16 units or graphemes", () => {
    // 25 four-person families: 7 code points each = 175 > 100, although only 25 graphemes.
    expect(accountNameProblem("👨‍👩‍👧‍👦".repeat(25))).toMatch(/got 175/);
    expect(accountNameProblem("👨‍👩‍👧‍👦".repeat(14))).toBeUndefined(); // 98
  });

  it("the body is strict: another key is named, and accountName is required", () => {
    const bad = (body: unknown) => {
      try {
        parseWith(renameAccountSchema, body);
      } catch (err) {
        return (err as ValidationError).issues;
      }
      throw new Error("accepted");
    };
    expect(bad({ accountName: "Acme", timezone: "UTC" })).toStrictEqual([
      { message: "timezone is not allowed", key: "timezone", path: ["timezone"] },
    ]);
    expect(bad({})).toStrictEqual([
      { message: "accountName is required", key: "accountName", path: ["accountName"] },
    ]);
    expect(bad({ accountName: 42 })[0]!.message).toMatch(/^accountName: .*expected string/);
  });
});
