/**
 * After a fault: is every stored event's identity filed? The stores are opened in this process once
 * the service has stopped, the sightings still on the bus are filed (as the next `serve` would), and
 * then each stored event's `canonical_id`, resolved through the warehouse's
 * `identity_links` in one hop, must be the identity the graph of record holds for its `identityId` —
 * and the warehouse's links must say what the graph says. A filing lost in a crash, or committed in
 * the graph and never written to the warehouse, breaks one or the other.
 */
import { loadConfig } from "../../src/config.js";
import { IdentityAssigner } from "../../src/identity/assign.js";
import { IdentityGraph } from "../../src/identity/graph.js";
import { IdentityWorker } from "../../src/identity/worker.js";
import { openStores } from "../../src/stores/index.js";

const EXAMPLES = 5;

export interface IdentityState {
  /** Sightings messages left unfiled after the settle. */
  left: number;
  /** The graph of record: "type:value" → identity. */
  graph: Map<string, string>;
  /** The warehouse's links as they stand: "type:value" → identity. */
  links: Map<string, string>;
  events: { event_id: string; identity_id: string; canonical_id: string }[];
}

export async function settledIdentity(env: Record<string, string>, pixelId: string): Promise<IdentityState> {
  const config = loadConfig({ ...env, LOG_LEVEL: "silent" });
  const stores = await openStores(config, "fault test identity check");
  try {
    // The service has stopped: messages its consumers held (a killed one's among them) are taken over
    // at once instead of after the usual idle time.
    const worker = new IdentityWorker(
      stores.bus,
      new IdentityGraph(stores.identity),
      stores.warehouse,
      new IdentityAssigner(),
      { claimIdleMs: 0 },
    );
    const { messages } = await worker.catchUp(60_000);
    const graph = new Map(
      (await stores.identity.aliases(pixelId)).map((a) => [`${a.type}:${a.value}`, a.canonical]),
    );
    const rows = await stores.warehouse.query<{ k: string; c: string }>(
      `SELECT concat(alias_type, ':', alias_value) AS k, argMax(canonical_id, version) AS c FROM identity_links
       WHERE pixel_id = {pixel:String} GROUP BY alias_type, alias_value`,
      { pixel: pixelId },
    );
    const events = await stores.warehouse.query<IdentityState["events"][number]>(
      "SELECT event_id, identity_id, canonical_id FROM events WHERE pixel_id = {pixel:String}",
      { pixel: pixelId },
    );
    return { left: messages, graph, links: new Map(rows.map((r) => [r.k, r.c])), events };
  } finally {
    await stores.close();
  }
}

/** What breaks "every stored event resolves in one hop to its filed identity", as messages. */
export function identityViolations(state: IdentityState): string[] {
  const out: string[] = [];
  if (state.left > 0) out.push(`${state.left} sightings message(s) still unfiled after the settle`);
  const disagree = [...state.graph].filter(([k, c]) => state.links.get(k) !== c);
  if (disagree.length) {
    out.push(
      `${disagree.length} of ${state.graph.size} alias(es) whose warehouse link differs from the graph, e.g. ${disagree
        .slice(0, EXAMPLES)
        .map(([k, c]) => `${k}: graph ${c}, warehouse ${state.links.get(k) ?? "none"}`)
        .join("; ")}`,
    );
  }
  const unresolved = state.events.filter((e) => {
    const filed = state.graph.get(`identity:${e.identity_id}`);
    const resolved = state.links.get(`canonical:${e.canonical_id}`) ?? e.canonical_id;
    return filed === undefined || resolved !== filed;
  });
  if (unresolved.length) {
    out.push(
      `${unresolved.length} of ${state.events.length} stored event(s) whose identity does not resolve to the filed one, e.g. ${unresolved
        .slice(0, EXAMPLES)
        .map(
          (e) =>
            `${e.event_id} (identity ${e.identity_id}: filed ${state.graph.get(`identity:${e.identity_id}`) ?? "never"}, row ${e.canonical_id})`,
        )
        .join("; ")}`,
    );
  }
  return out;
}
