/**
 * What a scenario's ledger and the raw events table say, as figures (the summary line and
 * docs/reliability.md) and as violations of each guarantee (the failure messages: counts first, then
 * a few example ids with the attempts that stored them).
 */
import { type Batch, batchName } from "./load.js";
import type { ScenarioRun } from "./scenario.js";

const EXAMPLES = 5;

export interface Figures {
  requests: { load: number; resend: number; verify: number; total: number };
  idsSent: number;
  /** Ids whose batch was acknowledged while the load ran. */
  ackedInLoad: number;
  /** Ids in batches never acknowledged while the load ran. */
  neverAcked: number;
  /** Ids not in the raw table at the end (after both resends). */
  lost: string[];
  /** …of which a 200 had covered (in the load or a resend): acknowledged but not stored. */
  lostAcknowledged: string[];
  /** Ids with more than one copy in the raw table. */
  storedTwice: string[];
  /** Ids acknowledged in the load whose only copy was stored by a later attempt. */
  ackedBeforeStored: string[];
  /** Ids in the raw table that no client sent. */
  unknown: string[];
  /** Failed requests by label, every phase. */
  failures: Map<string, number>;
  /** Copies stored by the first and the second resend (raw table). */
  resendStored: number;
  verifyStored: number;
}

const idsOf = (batches: Batch[]) => batches.flatMap((b) => b.ids);

export function figuresOf(run: ScenarioRun): Figures {
  const { ledger, raw } = run;
  const sent = new Set(idsOf(ledger.batches));
  const acked = new Set(
    idsOf(ledger.batches.filter((b) => b.ackedInLoad || b.resend !== undefined || b.verify !== undefined)),
  );
  const ackedInLoad = new Set(idsOf(ledger.batches.filter((b) => b.ackedInLoad)));
  const lost = [...sent].filter((id) => !raw.has(id));
  const storedTwice = [...raw].filter(([, r]) => r.count > 1).map(([id]) => id);
  const ackedBeforeStored = [...ackedInLoad].filter((id) => {
    const r = raw.get(id);
    return r !== undefined && !r.names.includes("fault.L");
  });
  let resendStored = 0;
  let verifyStored = 0;
  for (const r of raw.values()) {
    for (const name of r.names) {
      if (name.startsWith("fault.R1.")) resendStored++;
      else if (name.startsWith("fault.R2.")) verifyStored++;
    }
  }
  const failures = new Map<string, number>();
  for (const f of ledger.failures) {
    const label = f.what === "503" && f.retryAfter === undefined ? "503 without Retry-After" : f.what;
    failures.set(label, (failures.get(label) ?? 0) + 1);
  }
  const requests = { ...ledger.requests, total: 0 };
  requests.total = requests.load + requests.resend + requests.verify;
  return {
    requests,
    idsSent: sent.size,
    ackedInLoad: ackedInLoad.size,
    neverAcked: sent.size - ackedInLoad.size,
    lost,
    lostAcknowledged: lost.filter((id) => acked.has(id)),
    storedTwice,
    ackedBeforeStored,
    unknown: [...raw.keys()].filter((id) => !sent.has(id)),
    failures,
    resendStored,
    verifyStored,
  };
}

function examples(ids: string[], run: ScenarioRun): string {
  return ids
    .slice(0, EXAMPLES)
    .map((id) => {
      const r = run.raw.get(id);
      return r ? `${id} ×${r.count} [${r.names.join(", ")}]` : `${id} (no copy)`;
    })
    .join("; ");
}

const byLabel = (m: Map<string, number>) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .map(([k, n]) => `${k}×${n}`)
    .join(", ") || "none";

export function violations(run: ScenarioRun, f: Figures) {
  const { ledger } = run;
  const exactlyOnce: string[] = [];
  if (f.storedTwice.length) {
    const loadAcked = new Set(idsOf(ledger.batches.filter((b) => b.ackedInLoad)));
    const inLoad = f.storedTwice.filter((id) => loadAcked.has(id));
    exactlyOnce.push(
      `${f.storedTwice.length} id(s) stored more than once (${inLoad.length} of them acknowledged during the load), e.g. ${examples(f.storedTwice, run)}`,
    );
  }
  if (f.lostAcknowledged.length) {
    const missing = new Set(f.lostAcknowledged);
    const batches = ledger.batches.filter((b) => b.ids.some((id) => missing.has(id)));
    const inLoad = batches
      .filter((b) => b.ackedInLoad)
      .reduce((s, b) => s + b.ids.filter((id) => missing.has(id)).length, 0);
    const duplicates = batches
      .filter((b) => !b.ackedInLoad)
      .reduce((s, b) => s + (b.resend?.duplicatesSkipped ?? 0), 0);
    exactlyOnce.push(
      `${f.lostAcknowledged.length} acknowledged id(s) have no copy in the raw table: ${inLoad} acknowledged during the load, ${f.lostAcknowledged.length - inLoad} only by a resend (whose answers for those batches counted ${duplicates} duplicate(s)), e.g. ${examples(f.lostAcknowledged, run)}`,
    );
  }
  if (f.ackedBeforeStored.length) {
    exactlyOnce.push(
      `${f.ackedBeforeStored.length} id(s) acknowledged during the load had no copy from that request (stored only by a later resend), e.g. ${examples(f.ackedBeforeStored, run)}`,
    );
  }
  if (ledger.loadDuplicates.length) {
    const n = ledger.loadDuplicates.reduce((s, d) => s + d.duplicatesSkipped, 0);
    exactlyOnce.push(
      `${n} never-sent id(s) answered as duplicates on their first send, in ${ledger.loadDuplicates.length} batch(es), e.g. ${ledger.loadDuplicates
        .slice(0, EXAMPLES)
        .map((d) => `${d.batch}: ${d.duplicatesSkipped}`)
        .join("; ")}`,
    );
  }
  if (f.unknown.length) {
    exactlyOnce.push(
      `${f.unknown.length} id(s) in the raw table that no client sent, e.g. ${f.unknown.slice(0, EXAMPLES).join("; ")}`,
    );
  }

  const nothingLost: string[] = [];
  if (f.lost.length) {
    const lost = new Set(f.lost);
    const batches = ledger.batches.filter((b) => b.ids.some((id) => lost.has(id)));
    const duplicates = batches.reduce((s, b) => s + (b.resend?.duplicatesSkipped ?? 0), 0);
    nothingLost.push(
      `${f.lost.length} of ${f.idsSent} id(s) sent are not stored after the resend (${f.lostAcknowledged.length} of them acknowledged), in ${batches.length} batch(es), which the first resend answered with ${duplicates} duplicate(s); e.g. ${examples(f.lost, run)}; batches ${batches
        .slice(0, EXAMPLES)
        .map((b) => `${batchName(b)} acknowledged during load: ${b.ackedInLoad}`)
        .join("; ")}`,
    );
  }
  for (const r of [run.resend, run.verify]) {
    if (r.unacknowledged.length) {
      nothingLost.push(
        `${r.unacknowledged.length} batch(es) never acknowledged in the ${r.phase === "resend" ? "first" : "second"} resend (retries exhausted), e.g. ${r.unacknowledged
          .slice(0, EXAMPLES)
          .map(batchName)
          .join("; ")}`,
      );
    }
  }

  const failures: string[] = [];
  const bad = ledger.failures.filter(
    (x) => !(x.what.startsWith("conn:") || (x.what === "503" && x.retryAfter !== undefined)),
  );
  if (bad.length) {
    const labels = new Map<string, number>();
    for (const x of bad) {
      const label = x.what === "503" ? "503 without Retry-After" : x.what;
      labels.set(label, (labels.get(label) ?? 0) + 1);
    }
    const samples = new Map<string, string>();
    for (const x of bad)
      if (!samples.has(x.what))
        samples.set(x.what, `${x.what} (${x.phase}, ${x.batch}): ${x.body.slice(0, 200)}`);
    failures.push(
      `${bad.length} of ${ledger.failures.length} failed request(s) were neither a 503 with Retry-After nor a connection error: ${byLabel(labels)}`,
      ...samples.values(),
      ...run.serviceProblems.map((p) => `service logged: ${p}`),
    );
  }

  const recovered: string[] = [];
  if (run.recovery) recovered.push(run.recovery);
  if (run.spec.restartsService) {
    if (run.unexpectedExits.length)
      recovered.push(`service exits the test did not cause: ${run.unexpectedExits.join("; ")}`);
  } else {
    if (run.starts !== 1) recovered.push(`the service was started ${run.starts} times`);
    if (run.unexpectedExits.length) recovered.push(`the service exited: ${run.unexpectedExits.join("; ")}`);
    if (!run.aliveAtEnd) recovered.push("the service was not running after the resends");
  }
  if (run.shutdownCode !== 0)
    recovered.push(`the clean shutdown after the resends exited with ${run.shutdownCode}`);

  const resendIdempotent: string[] = [];
  const againStored = ledger.batches.filter((b) => b.ackedInLoad && b.resend && b.resend.eventsIngested > 0);
  if (againStored.length) {
    const n = againStored.reduce((s, b) => s + b.resend!.eventsIngested, 0);
    resendIdempotent.push(
      `the first resend stored ${n} event(s) again in ${againStored.length} batch(es) acknowledged during the load, e.g. ${againStored
        .slice(0, EXAMPLES)
        .map((b) => `${batchName(b)} ingested ${b.resend!.eventsIngested}`)
        .join("; ")}`,
    );
  }
  if (f.resendStored > f.neverAcked) {
    resendIdempotent.push(
      `the first resend stored ${f.resendStored} copies, more than the ${f.neverAcked} id(s) never acknowledged`,
    );
  }
  const verifyNotDup = ledger.batches.filter(
    (b) => b.verify && (b.verify.eventsIngested !== 0 || b.verify.duplicatesSkipped !== b.ids.length),
  );
  if (verifyNotDup.length || f.verifyStored) {
    const n = verifyNotDup.reduce((s, b) => s + b.verify!.eventsIngested, 0);
    resendIdempotent.push(
      `the second resend answered ${n} event(s) as ingested in ${verifyNotDup.length} batch(es) and stored ${f.verifyStored} copies (raw), e.g. ${verifyNotDup
        .slice(0, EXAMPLES)
        .map((b) => `${batchName(b)} ingested ${b.verify!.eventsIngested}`)
        .join("; ")}`,
    );
  }
  return { exactlyOnce, nothingLost, failures, recovered, resendIdempotent };
}

/**
 * The batch the first resend took longest to get acknowledged, and what the failed answers said (by
 * message): where a fault leaves ids unstorable for a while.
 */
export function formatResendDetail(run: ScenarioRun): string {
  const slowest = run.ledger.batches
    .filter((b) => b.resendMs !== undefined)
    .sort((a, b) => b.resendMs! - a.resendMs!)[0];
  const messages = new Map<string, number>();
  for (const x of run.ledger.failures) {
    const label = `${x.phase}: ${x.what}${x.body ? ` ${x.body.replace(/\d+/g, "N")}` : ""}`;
    messages.set(label, (messages.get(label) ?? 0) + 1);
  }
  const tries = slowest
    ? run.ledger.failures
        .filter((x) => x.phase === "resend" && x.batch === batchName(slowest))
        .map((x) => `${x.what} in ${(x.ms / 1000).toFixed(1)} s`)
    : [];
  return (
    `  slowest first resend: ${slowest ? `${batchName(slowest)} acknowledged after ${slowest.resendAttempts} attempt(s), ${(slowest.resendMs! / 1000).toFixed(1)} s${tries.length ? ` (failed: ${tries.join(", ")})` : ""}` : "none"}` +
    `\n  failed answers: ${byLabel(messages)}`
  );
}

export function formatSummary(run: ScenarioRun, f: Figures): string {
  const r = f.requests;
  return (
    `[fault ${run.spec.name}] requests ${r.total} (load ${r.load}, resend ${r.resend}, second resend ${r.verify})` +
    ` · ids sent ${f.idsSent}, acknowledged during load ${f.ackedInLoad}` +
    ` · lost ${f.lost.length} (acknowledged ${f.lostAcknowledged.length})` +
    ` · stored twice ${f.storedTwice.length}` +
    ` · failures ${byLabel(f.failures)}` +
    ` · resend stored ${f.resendStored} (never acknowledged ${f.neverAcked}), second resend stored ${f.verifyStored}` +
    ` · ${(run.ms / 1000).toFixed(1)} s`
  );
}
