import { parentPort, workerData } from "node:worker_threads";
import { LevelIdentityGraphStore } from "./level.js";
import { type FlatRows, type FlatWrite, flatRows, unflatWrite } from "./level-wire.js";

/**
 * The thread side of LevelThreadIdentityGraphStore: opens the graph in LevelDB and answers its
 * calls (protocol in level-thread.ts). Calls of one pixel arrive one at a time (the main thread holds
 * the pixel's writer lock), so they are run as they come.
 */
const port = parentPort;
if (!port) throw new Error("level-thread-host runs in a worker thread");
const { dir } = workerData as { dir: string };

type Call =
  | { id: number; op: "values"; pixel: string; types: string[]; values: string[]; ids: string[] }
  | { id: number; op: "write"; pixel: string; change: FlatWrite }
  | { id: number; op: "aliasesOf"; pixel: string; ids: string[] }
  | { id: number; op: "aliases"; pixel: string }
  | { id: number; op: "copyMarkers" | "markCopied" | "markCleared" | "close" }
  | { id: number; op: "copyPage"; rows: Parameters<LevelIdentityGraphStore["copyPage"]>[0] };

/** The message with its causes (classic-level says "failed to open" and puts the why in `cause`). */
function errorOf(err: unknown): { message: string } {
  const parts: string[] = [];
  for (let e: unknown = err; e !== undefined && parts.length < 4; e = (e as { cause?: unknown }).cause) {
    parts.push(e instanceof Error ? e.message : String(e));
    if (!(e instanceof Error)) break;
  }
  return { message: parts.join(": ") };
}

try {
  const store = await LevelIdentityGraphStore.open(dir, null);
  const run = (m: Call): Promise<unknown> => {
    switch (m.op) {
      case "values":
        return store.withPixel(m.pixel, (g) => g.values(m.types, m.values, m.ids));
      case "write":
        return store.withPixel(
          m.pixel,
          async (g): Promise<FlatRows> => flatRows(await g.applyWrite(unflatWrite(m.change))),
        );
      case "aliasesOf":
        return store.withPixel(m.pixel, async (g) => flatRows(await g.aliasesOf(m.ids)));
      case "aliases":
        return store.aliases(m.pixel);
      case "copyMarkers":
        return store.copyMarkers();
      case "copyPage":
        return store.copyPage(m.rows);
      case "markCopied":
        return store.markCopied();
      case "markCleared":
        return store.markCleared();
      case "close":
        return store.close();
    }
  };
  port.on("message", (m: Call) => {
    run(m).then(
      (result) => {
        port.postMessage({ id: m.id, ok: true, result });
        if (m.op === "close") port.close();
      },
      (err: unknown) => port.postMessage({ id: m.id, ok: false, error: errorOf(err) }),
    );
  });
  port.postMessage({ ready: true });
} catch (err) {
  // LevelDB could not be opened (a lock held by another process, a corrupt directory): said once.
  port.postMessage({ ready: false, error: errorOf(err) });
  port.close();
}
