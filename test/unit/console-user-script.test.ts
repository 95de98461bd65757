import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { tokenize } from "../../src/console/lexer.js";

/**
 * docker/clickhouse/initdb.d/010-console-user.sh fills console-user.sql's placeholders with sed. The
 * password reaches a SQL string literal intact, whatever it holds; nothing is committed as a default.
 */
const run = promisify(execFile);
const SCRIPT = "docker/clickhouse/initdb.d/010-console-user.sh";

async function rendered(env: Record<string, string>) {
  const { stdout } = await run("bash", [SCRIPT], {
    env: {
      PATH: process.env.PATH,
      CONSOLE_USER_SQL: "docker/clickhouse/console-user.sql",
      PRINT_ONLY: "1",
      ...env,
    },
  });
  return stdout;
}

/** The string literals of the CREATE USER and ALTER USER statements, as the engine reads them. */
const passwords = (sql: string) =>
  sql
    .split("\n")
    .filter((l) => /^(CREATE|ALTER) USER/.test(l))
    .map(
      (l) => tokenize(l).find((t) => t.kind === "string" && t.value !== "pixelhouse_console_profile")!.value,
    );

describe("the console user's init script", () => {
  it.each(["p&a/s|s", "back\\slash\\\\", "quote'd\"and`tick`$HOME$(id)", "ünïcødé 🎉 & more", "{{DB}}"])(
    "carries the password %s into the SQL exactly",
    async (password) => {
      const sql = await rendered({ CLICKHOUSE_CONSOLE_PASSWORD: password });
      expect(passwords(sql)).toEqual([password, password]);
      expect(sql).not.toMatch(/\{\{(USER|CONSOLE_DB|PASSWORD)\}\}/);
      expect(sql).toContain("GRANT SELECT ON pixelhouse.events TO pixelhouse_console;");
    },
  );

  it("needs a password, and refuses names that are not plain identifiers", async () => {
    await expect(rendered({})).rejects.toThrow(/set CLICKHOUSE_CONSOLE_PASSWORD/);
    await expect(rendered({ CLICKHOUSE_CONSOLE_PASSWORD: "x", CLICKHOUSE_DB: "a;b" })).rejects.toThrow(
      /not a plain identifier/,
    );
    await expect(rendered({ CLICKHOUSE_CONSOLE_PASSWORD: "a\nb" })).rejects.toThrow(/line breaks/);
  });

  it("is required by docker-compose.yml, like KEY_SECRET, with no default", () => {
    const compose = readFileSync("docker-compose.yml", "utf8");
    expect(compose).toContain("KEY_SECRET: ${KEY_SECRET:?");
    const lines = compose.split("\n").filter((l) => l.includes("CLICKHOUSE_CONSOLE_PASSWORD:"));
    expect(lines).toHaveLength(2);
    for (const line of lines) expect(line).toMatch(/\$\{CLICKHOUSE_CONSOLE_PASSWORD:\?[^}]+\}/);
  });
});
