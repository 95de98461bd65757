import { readFileSync } from "node:fs";
import { transformSync } from "esbuild";

let cached: string | undefined;

/** The browser pixel, minified once per process from the readable source beside this file. */
export function pixelScript(): string {
  cached ??= transformSync(readFileSync(new URL("./pixel.js", import.meta.url), "utf8"), {
    minify: true,
    target: "es2017",
    legalComments: "none",
  }).code;
  return cached;
}
