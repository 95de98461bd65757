/**
 * Ingestion and forwarding meet only in services.ts: ingestion declares the `ForwardQueue` it needs
 * (src/ingest/group.ts) and forwarding implements it without knowing ingestion (src/forwarding/CONTEXT.md).
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize, relative, sep } from "node:path";
import { expect, it } from "vitest";

const SRC = join(import.meta.dirname, "../../src");

function imports(folder: string): { file: string; target: string }[] {
  const dir = join(SRC, folder);
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => /\.(ts|mts)$/.test(f))
    .flatMap((f) => {
      const file = join(dir, f);
      return [...readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"(\.[^"]+)"/g)].map((m) => ({
        file: relative(SRC, file),
        target: relative(SRC, normalize(join(dirname(file), m[1]!))),
      }));
    });
}

const into = (folder: string) => (i: { target: string }) => i.target.split(sep)[0] === folder;

it("forwarding imports nothing from ingest, and ingest nothing from forwarding", () => {
  const forwarding = imports("forwarding");
  expect(forwarding.length).toBeGreaterThan(0);
  expect(forwarding.filter(into("ingest"))).toEqual([]);
  expect(imports("ingest").filter(into("forwarding"))).toEqual([]);
});
