#!/usr/bin/env node
// Writes data/fx/demo-rates.csv: GENERATED DEMO DATA, NOT MARKET DATA. Daily units-per-USD rates for
// the demo currencies, 2025-01-01 … 2026-12-31, as a smooth random walk (deterministic from a fixed
// seed) from plausible starting values, pulled gently back towards them. The CSV is committed, so the
// demo needs no generation step; run `node scripts/generate-demo-rates.mjs` to make it again.
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const SEED = 20250101;
const FROM = "2025-01-01";
const TO = "2026-12-31";
/** Starting units per USD and decimals kept. */
const CURRENCIES = [
  { code: "USD", start: 1, decimals: 6, vol: 0 },
  { code: "EUR", start: 0.96, decimals: 6, vol: 0.0045 },
  { code: "GBP", start: 0.8, decimals: 6, vol: 0.0045 },
  { code: "CAD", start: 1.44, decimals: 6, vol: 0.0035 },
  { code: "AUD", start: 1.61, decimals: 6, vol: 0.006 },
  { code: "JPY", start: 157, decimals: 4, vol: 0.0065 },
  { code: "SEK", start: 11.0, decimals: 6, vol: 0.006 },
];

function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}

/** A standard normal draw (Box–Muller). */
const gaussian = (rand) => Math.sqrt(-2 * Math.log(1 - rand())) * Math.cos(2 * Math.PI * rand());

const rand = mulberry32(SEED);
const lines = [
  "# GENERATED DEMO DATA, NOT MARKET DATA: a deterministic random walk made by scripts/generate-demo-rates.mjs",
  "date,currency,unitsPerUsd",
];
// Each currency's log-rate drifts by a smoothed shock (an AR(1) on the daily change, so trends last
// a few days) with a weak pull back to its start.
const state = CURRENCIES.map((c) => ({ ...c, log: Math.log(c.start), momentum: 0 }));
for (
  let d = new Date(`${FROM}T00:00:00Z`);
  d <= new Date(`${TO}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + 1)
) {
  const date = d.toISOString().slice(0, 10);
  for (const c of state) {
    if (c.vol > 0) {
      c.momentum = 0.6 * c.momentum + 0.4 * gaussian(rand) * c.vol;
      c.log += c.momentum - 0.01 * (c.log - Math.log(c.start));
    }
    lines.push(`${date},${c.code},${Math.exp(c.log).toFixed(c.decimals)}`);
  }
}

const out = join(dirname(fileURLToPath(import.meta.url)), "..", "data", "fx", "demo-rates.csv");
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, `${lines.join("\n")}\n`);
process.stdout.write(`wrote ${lines.length - 2} rates to ${out}\n`);
