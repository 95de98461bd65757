/**
 * A real Prometheus (Debian's `prometheus` package) scrapes a running service on its METRICS_PORT
 * (docs/operations.md): after an ingest load of 10 requests × 50 events, Prometheus's HTTP API reads
 * back pixelhouse_events_accepted_total = 500, the identity worker's lag gauge, and `up` = 1. Both
 * processes are started here on 127.0.0.1 and stopped at the end; every wait polls a condition with a
 * deadline. Without the binary the test is skipped — unless REQUIRE_SERVER_STORES=1 (CI installs it).
 */
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REQUIRE_SERVER_STORES } from "../helpers/env.js";
import { freePort, which } from "../helpers/own-servers.js";
import { tempDir } from "../helpers/stores.js";

const ROOT = join(import.meta.dirname, "../..");
const BIN = join(ROOT, "bin/pixelhouse.mjs");
const prometheusBin = await which("prometheus");
if (!prometheusBin && REQUIRE_SERVER_STORES) {
  throw new Error(
    "prometheus is not installed (apt-get install prometheus); REQUIRE_SERVER_STORES=1 requires it",
  );
}

const dir = tempDir("pixelhouse-prom-");
const env = {
  ...process.env,
  DATA_DIR: join(dir.path, "data"),
  LOG_LEVEL: "warn",
  DEMO_ON_FIRST_START: "false",
  PORT: "0",
  METRICS_PORT: "0",
};
const children: ChildProcess[] = [];

async function cli(args: string[]): Promise<Record<string, unknown>> {
  const { stdout } = await promisify(execFile)(process.execPath, [BIN, ...args, "--json"], {
    cwd: ROOT,
    env,
  });
  return JSON.parse(stdout) as Record<string, unknown>;
}

/** Polls `check` until it returns a value, or fails after `ms`. */
async function until<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  for (let pause = 50; ; pause = Math.min(pause * 2, 500)) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${ms} ms`);
    await new Promise((r) => setTimeout(r, pause));
  }
}

let service: { url: string; metricsUrl: string };
let prometheus: string;
let key: string;
const pixelId = "prom";

beforeAll(async () => {
  if (!prometheusBin) return;
  await cli(["pixel", "create", "--name", "Prometheus test", "--id", pixelId]);
  key = String(
    (await cli(["key", "create", "--pixel", pixelId, "--scopes", "events:write,analytics:read"])).key,
  );
  const serve = spawn(process.execPath, [BIN, "serve", "--json"], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(serve);
  const [line] = (await Promise.race([
    once(createInterface({ input: serve.stdout! }), "line"),
    once(serve, "exit").then(() => {
      throw new Error("serve exited before it was ready");
    }),
  ])) as [string];
  service = JSON.parse(line) as typeof service;
  const target = new URL(service.metricsUrl).host;
  const port = await freePort();
  const config = join(dir.path, "prometheus.yml");
  writeFileSync(
    config,
    `global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nrule_files:\n  - ${join(ROOT, "docker/prometheus/alerts.yml")}\nscrape_configs:\n  - job_name: pixelhouse\n    static_configs:\n      - targets: ["${target}"]\n`,
  );
  const prom = spawn(
    prometheusBin,
    [
      `--config.file=${config}`,
      `--storage.tsdb.path=${join(dir.path, "tsdb")}`,
      `--web.listen-address=127.0.0.1:${port}`,
      "--log.level=warn",
    ],
    { stdio: "ignore" },
  );
  children.push(prom);
  prometheus = `http://127.0.0.1:${port}`;
  await until("prometheus ready", 30_000, async () =>
    (await fetch(`${prometheus}/-/ready`)).ok ? true : undefined,
  );
}, 120_000);

afterAll(async () => {
  for (const c of children.reverse()) {
    if (c.exitCode !== null || c.signalCode !== null) continue;
    c.kill("SIGTERM");
    await Promise.race([once(c, "exit"), new Promise((r) => setTimeout(r, 15_000))]);
    if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  }
  dir.remove();
}, 60_000);

/** The value of an instant query's single series, or undefined while there is none. */
async function promValue(query: string): Promise<number | undefined> {
  const res = await fetch(`${prometheus}/api/v1/query?query=${encodeURIComponent(query)}`);
  const body = (await res.json()) as { data?: { result?: { value: [number, string] }[] } };
  const v = body.data?.result?.[0]?.value?.[1];
  return v === undefined ? undefined : Number(v);
}

describe.skipIf(!prometheusBin)("Prometheus scraping the service", () => {
  it("reads the accepted events, the identity lag and `up` back through Prometheus's API", async () => {
    for (let r = 0; r < 10; r++) {
      const events = Array.from({ length: 50 }, (_, i) => ({
        name: "page_view",
        eventId: `prom-${r}-${i}`,
        identityId: `visitor-${(r * 50 + i) % 120}`,
      }));
      const res = await fetch(`${service.url}/tr/api/events`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": key, "x-pixel-id": pixelId },
        body: JSON.stringify({ events }),
      });
      expect(res.status, await res.text()).toBe(200);
    }
    expect(await until("up", 30_000, () => promValue('up{job="pixelhouse"}'))).toBe(1);
    const accepted = await until("500 accepted events scraped", 30_000, async () => {
      const v = await promValue('sum(pixelhouse_events_accepted_total{job="pixelhouse"})');
      return v === 500 ? v : undefined;
    });
    expect(accepted).toBe(500);
    const lag = await until("the identity lag gauge scraped", 30_000, () =>
      promValue('pixelhouse_consumer_lag_messages{job="pixelhouse",consumer="identity"}'),
    );
    expect(lag).toBeGreaterThanOrEqual(0);
    // The worker runs in `serve`: the gauge reaches 0 once everything is filed.
    expect(
      await until("identity caught up in Prometheus", 30_000, async () => {
        const v = await promValue('pixelhouse_consumer_lag_messages{job="pixelhouse",consumer="identity"}');
        return v === 0 ? v : undefined;
      }),
    ).toBe(0);
    expect(await promValue('sum(pixelhouse_ingest_ack_seconds_count{job="pixelhouse"})')).toBe(10);
  }, 150_000);

  it("loads the recommended alerts, and every query of the Grafana dashboard runs on what the service exports", async () => {
    const rules = (await (await fetch(`${prometheus}/api/v1/rules`)).json()) as {
      data: { groups: { rules: { name: string }[] }[] };
    };
    expect(rules.data.groups.flatMap((g) => g.rules.map((r) => r.name)).sort()).toEqual([
      "PixelhouseConsumerBehind",
      "PixelhouseDeadLetters",
      "PixelhouseDown",
      "PixelhouseIngestAckSlow",
      "PixelhouseStoreUnavailable",
    ]);
    const exported = await (await fetch(service.metricsUrl)).text();
    const dashboard = JSON.parse(readFileSync(join(ROOT, "docs/grafana-dashboard.json"), "utf8")) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    for (const panel of dashboard.panels) {
      for (const { expr } of panel.targets) {
        const res = await fetch(`${prometheus}/api/v1/query?query=${encodeURIComponent(expr)}`);
        const body = (await res.json()) as { status: string; error?: string };
        expect(body.status, `${panel.title}: ${expr} ${body.error ?? ""}`).toBe("success");
        for (const name of expr.match(/pixelhouse_[a-z0-9_]+/g) ?? []) {
          const family = name.replace(/_(bucket|sum|count)$/, "");
          expect(exported, `${panel.title}: ${name}`).toMatch(new RegExp(`^# TYPE ${family} `, "m"));
        }
      }
    }
  });
});
