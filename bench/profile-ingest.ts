/** Load for profiling a running service: node --import tsx bench/profile-ingest.ts URL KEY [PIXEL] */
import { makeBatches } from "./events-gen.js";
import { percentile, runLoad } from "./load-client.js";

const [url, key, pixel = "demo"] = process.argv.slice(2);
const bodies = makeBatches(
  Number(process.env.BENCH_BATCHES ?? 300),
  100,
  Number(process.env.BENCH_SEED ?? 7),
);
const r = await runLoad(url!, bodies, 100, 32, { "x-api-key": key!, "x-pixel-id": pixel });
console.log(
  `${r.eventsPerSecond.toFixed(0)} events/s, p50 ${percentile(r.latenciesMs, 50).toFixed(0)} ms, failures ${r.failures}`,
);
