/**
 * Shared helpers of the ingestion end-to-end tests (ingest-*.test.ts, dedup-cases.ts): sending events,
 * reading the warehouse back, and checking the events API error envelope.
 */
import { createHash } from "node:crypto";
import { request } from "node:http";
import { expect } from "vitest";
import type { TestApp } from "../helpers/app.js";

export type Pixel = Awaited<ReturnType<TestApp["pixelWithKey"]>>;
export type Json = Record<string, unknown>;

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
export const ULID_RE = /^[0-9A-HJKMNP-TV-Z]{26}$/;

export const sha256 = (s: string): string => createHash("sha256").update(s, "utf8").digest("hex");

/** A warehouse DateTime64(3) as the adapters print it (`YYYY-MM-DD HH:MM:SS.mmm`, UTC). */
export const whTime = (ms: number): string => new Date(ms).toISOString().replace("T", " ").replace("Z", "");

export interface IngestOk {
  requestId: string;
  eventsIngested: number;
  duplicatesSkipped: number;
}

export interface EventsEnvelope {
  requestId: string;
  message: string;
  error: { code: string; message: string; details: { message: string; index: number; field: string }[] };
}

/** POST /tr/api/events with the pixel's key. */
export function sendEvents(
  app: TestApp,
  px: Pixel,
  events: unknown[],
  headers?: Record<string, string>,
): ReturnType<TestApp["call"]> {
  return app.call("POST", "/tr/api/events", {
    key: px.key,
    pixelId: px.pixelId,
    body: { events },
    ...(headers ? { headers } : {}),
  });
}

/** Sends and asserts a 200; returns the success body. */
export async function sendOk(app: TestApp, px: Pixel, events: unknown[]): Promise<IngestOk> {
  const res = await sendEvents(app, px, events);
  expect(res.status, res.text).toBe(200);
  return res.body as IngestOk;
}

/** Every stored row (no FINAL: a second copy shows up) of a pixel, optionally of one event id. */
export async function eventRows(app: TestApp, pixelId: string, eventId?: string): Promise<Json[]> {
  return app.stores.warehouse.query<Json>(
    `SELECT * FROM events WHERE pixel_id = {pixel:String}${eventId === undefined ? "" : " AND event_id = {id:String}"}
     ORDER BY event_time, event_id`,
    eventId === undefined ? { pixel: pixelId } : { pixel: pixelId, id: eventId },
  );
}

export async function eventCount(app: TestApp, pixelId: string, eventId?: string): Promise<number> {
  return (await eventRows(app, pixelId, eventId)).length;
}

/** The one stored row of an event id (fails when there is not exactly one). */
export async function oneRow(app: TestApp, pixelId: string, eventId: string): Promise<Json> {
  const rows = await eventRows(app, pixelId, eventId);
  expect(rows, `rows stored for ${eventId}`).toHaveLength(1);
  return rows[0]!;
}

/** Asserts the events API error envelope (docs/errors.md) and returns it. */
export function expectEnvelope(
  res: { status: number; body: unknown; text: string; headers: Headers },
  status: number,
  codes?: string | string[],
): EventsEnvelope {
  expect(res.status, res.text).toBe(status);
  const body = res.body as EventsEnvelope;
  expect(typeof body, res.text).toBe("object");
  expect(Object.keys(body).sort()).toEqual(["error", "message", "requestId"]);
  expect(body.requestId).toMatch(UUID_RE);
  expect(body.requestId).toBe(res.headers.get("x-request-id"));
  expect(typeof body.message).toBe("string");
  expect(body.message.length).toBeGreaterThan(0);
  expect(Object.keys(body.error).sort()).toEqual(["code", "details", "message"]);
  expect(typeof body.error.code).toBe("string");
  expect(typeof body.error.message).toBe("string");
  expect(Array.isArray(body.error.details)).toBe(true);
  for (const d of body.error.details) {
    expect(typeof d.message).toBe("string");
    expect(Number.isInteger(d.index)).toBe(true);
    expect(typeof d.field).toBe("string");
  }
  if (codes !== undefined) expect([codes].flat()).toContain(body.error.code);
  return body;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  body: unknown;
}

/** A POST whose body goes out with `Transfer-Encoding: chunked` (no Content-Length), one write per chunk. */
export function postChunked(
  url: string,
  headers: Record<string, string>,
  chunks: readonly (string | Buffer)[],
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const req = request(
      url,
      { method: "POST", headers: { ...headers, "transfer-encoding": "chunked" } },
      (res) => {
        const parts: Buffer[] = [];
        res.on("data", (c: Buffer) => parts.push(c));
        res.on("end", () => {
          const text = Buffer.concat(parts).toString("utf8");
          let body: unknown = text;
          try {
            body = JSON.parse(text);
          } catch {
            // not JSON
          }
          settled = true;
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
      },
    );
    // The server may answer (413) before the client finished writing; later socket errors do not matter.
    req.on("error", (err) => {
      if (!settled) reject(err);
    });
    for (const c of chunks) req.write(c);
    req.end();
  });
}

/** Polls `probe` until it returns a value that is not undefined, for at most `attempts` × `delayMs`. */
export async function poll<T>(
  probe: () => Promise<T | undefined>,
  attempts = 100,
  delayMs = 100,
): Promise<T | undefined> {
  for (let i = 0; i < attempts; i++) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, delayMs));
  }
  return undefined;
}
