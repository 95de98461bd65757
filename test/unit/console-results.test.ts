/** The SQL console's answers without an engine: error messages, the JSON encoding, CSV headers. */
import { describe, expect, it } from "vitest";
import { ResultTooLargeError, toAnalystMessage } from "../../src/console/errors.js";
import { encodeJson, RepeatedHeader } from "../../src/console/service.js";

const dbs = ["pxh", "pxh_console"];

describe("toAnalystMessage: the message and the code name only", () => {
  it.each([
    [
      "chDB's nested rethrows, each with its prefix and version",
      "Code: 241. DB::Exception: Code: 241. DB::Exception: Code: 241. DB::Exception: Query memory limit exceeded: would use 2.80 GiB (attempt to allocate chunk of 2.79 GiB), maximum: 476.84 MiB. Untracked memory across all threads: 106.13 KiB. (MEMORY_LIMIT_EXCEEDED) (version 26.7.2.1). (MEMORY_LIMIT_EXCEEDED)",
      undefined,
      "Query memory limit exceeded: would use 2.80 GiB (attempt to allocate chunk of 2.79 GiB), maximum: 476.84 MiB. Untracked memory across all threads: 106.13 KiB. (MEMORY_LIMIT_EXCEEDED)",
    ],
    [
      "a different code inside: the outermost one is the error's",
      "Code: 36. DB::Exception: Bad argument: Code: 241. DB::Exception: inner. (MEMORY_LIMIT_EXCEEDED). (BAD_ARGUMENTS)",
      undefined,
      "Bad argument: inner. (BAD_ARGUMENTS)",
    ],
    [
      "a server's message, its code name given apart by the client library",
      "Timeout exceeded: elapsed 3000.1 ms, maximum: 3000 ms. ",
      "TIMEOUT_EXCEEDED",
      "Timeout exceeded: elapsed 3000.1 ms, maximum: 3000 ms. (TIMEOUT_EXCEEDED)",
    ],
    [
      "a server's text with its version and a stack trace",
      "Code: 62. DB::Exception: Syntax error: failed at position 1 (SELEC): SELEC 1. Expected one of: SELECT, WITH. (SYNTAX_ERROR) (version 25.8.1.1)\nStack trace:\n0. DB::Exception::Exception",
      undefined,
      "Syntax error: failed at position 1 (SELEC): SELEC 1. Expected one of: SELECT, WITH. (SYNTAX_ERROR)",
    ],
    [
      "an unknown identifier, with the console's wrapper quoted and real names",
      "Code: 47. DB::Exception: Unknown expression identifier `x` in scope SELECT x FROM pxh.ad_metrics_daily FINAL WHERE pixel_id = {pxh_pixel:String}. Maybe you meant pxh_console.identity_links? (UNKNOWN_IDENTIFIER)",
      undefined,
      "Unknown expression identifier `x`. (UNKNOWN_IDENTIFIER)",
    ],
  ])("%s", (_what, raw, codeName, expected) => {
    expect(toAnalystMessage(raw, dbs, codeName)).toBe(expected);
  });
});

describe("encodeJson", () => {
  const text = '["n","s"]\n["UInt64","String"]\n["1","a\\nb"]\n["2","c"]\n["3","d"]\n';
  const stats = { elapsedMs: 1.5, rowsRead: 3, bytesRead: 24 };

  it("puts the engine's rows into the answer as they are, cut at the limit", () => {
    const cut = encodeJson(text, 2, stats, 10_000);
    expect(JSON.parse(cut.body)).toEqual({
      columns: [
        { name: "n", type: "UInt64" },
        { name: "s", type: "String" },
      ],
      rows: [
        ["1", "a\nb"],
        ["2", "c"],
      ],
      rowCount: 2,
      truncated: true,
      elapsedMs: 1.5,
      rowsRead: 3,
      bytesRead: 24,
      limit: 2,
    });
    expect(cut.rows).toEqual([
      ["1", "a\nb"],
      ["2", "c"],
    ]);
    expect(encodeJson(text, 3, stats, 10_000)).toMatchObject({ rowCount: 3, truncated: false });
    expect(JSON.parse(encodeJson('["n"]\n["UInt8"]\n', 5, stats, 10_000).body)).toMatchObject({
      rows: [],
      rowCount: 0,
      truncated: false,
    });
  });

  it("refuses an answer larger than the cap, counted in bytes", () => {
    expect(() => encodeJson(text, 3, stats, 50)).toThrow(ResultTooLargeError);
    const wide = `["s"]\n["String"]\n["${"é".repeat(100)}"]\n`;
    // 100 characters, 200 bytes: the count is in bytes.
    expect(() => encodeJson(wide, 1, stats, 250)).toThrow(/CONSOLE_MAX_RESULT_BYTES/);
    expect(encodeJson(wide, 1, stats, 400).rowCount).toBe(1);
  });
});

describe("RepeatedHeader", () => {
  const bytes = (s: string) => Buffer.from(s);
  const pass = (chunks: string[]) => {
    const h = new RepeatedHeader();
    return chunks.map((c) => Buffer.from(h.strip(bytes(c))).toString()).join("");
  };

  it("drops the header chDB repeats at the start of every chunk, keeping the first", () => {
    expect(pass(['"n"\n1\n', '"n"\n2\n', '"n"\n3\n'])).toBe('"n"\n1\n2\n3\n');
    expect(pass(['"a","b\nc"\n1,2\n', '"a","b\nc"\n3,4\n'])).toBe('"a","b\nc"\n1,2\n3,4\n');
  });

  it("keeps chunks that do not start with the header, and a first header split across chunks", () => {
    expect(pass(['"n"\n1\n', "2\n", '"n"\n3\n'])).toBe('"n"\n1\n2\n3\n');
    expect(pass(['"lo', 'ng"\n1\n', '"long"\n2\n'])).toBe('"long"\n1\n2\n');
  });
});
