// PGlite inside a worker thread: its WebAssembly Postgres runs off the event loop, which stays free
// for HTTP. Plain JS (no TypeScript loader in workers). Protocol: see pglite.ts.
import { mkdirSync } from "node:fs";
import { parentPort, workerData } from "node:worker_threads";
import { PGlite, types } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";

// Same result shapes as the pg adapter: int8 as string, timestamps as Date, jsonb parsed.
const parsers = { [types.INT8]: (v) => v };

if (workerData.dir) mkdirSync(workerData.dir, { recursive: true });
// pg_trgm backs the catalog search indexes (sql/postgres/006_costs_products.sql).
// Start flags replace PGlite's own (single-user mode, search_path, exit_on_error, …), so they are
// repeated and the buffer pool the caller sized (pglite.ts) goes after them.
const startParams = [...PGlite.defaultStartParams, "-c", `shared_buffers=${workerData.sharedBuffersMb}MB`];
const db = await PGlite.create(workerData.dir ?? "memory://", {
  parsers,
  extensions: { pg_trgm },
  startParams,
});
const transactions = new Map();

const errorOf = (err) => ({ message: err?.message ?? String(err), code: err?.code, detail: err?.detail });
const reply = (id, result) => parentPort.postMessage({ id, ok: true, result });
const fail = (id, err) => parentPort.postMessage({ id, ok: false, error: errorOf(err) });

async function run(q, text, params) {
  const r = await q.query(text, params);
  return { rows: r.rows, rowCount: r.affectedRows || r.rows.length };
}

parentPort.on("message", async (m) => {
  try {
    switch (m.op) {
      case "query":
        return reply(m.id, await run(db, m.text, m.params));
      case "exec":
        await db.exec(m.script);
        return reply(m.id, null);
      case "begin":
        // The transaction callback stays open until the main thread sends "end".
        db.transaction(
          (tx) =>
            new Promise((resolve, reject) => {
              transactions.set(m.id, { tx, resolve, reject });
              reply(m.id, null);
            }),
        ).then(
          () => {
            const t = transactions.get(m.id);
            transactions.delete(m.id);
            if (t?.endId !== undefined) reply(t.endId, null);
          },
          (err) => {
            const t = transactions.get(m.id);
            transactions.delete(m.id);
            if (t?.endId !== undefined) t.rollback ? reply(t.endId, null) : fail(t.endId, err);
            else fail(m.id, err);
          },
        );
        return;
      case "txquery":
        return reply(m.id, await run(transactions.get(m.tx).tx, m.text, m.params));
      case "txexec":
        await transactions.get(m.tx).tx.exec(m.script);
        return reply(m.id, null);
      case "end": {
        const t = transactions.get(m.tx);
        t.endId = m.id;
        if (m.commit) t.resolve();
        else {
          t.rollback = true;
          t.reject(new Error("rollback"));
        }
        return;
      }
      case "close":
        await db.close();
        return reply(m.id, null);
      default:
        return fail(m.id, new Error(`unknown op ${m.op}`));
    }
  } catch (err) {
    fail(m.id, err);
  }
});
parentPort.postMessage({ ready: true });
