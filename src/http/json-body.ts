import type { IncomingMessage } from "node:http";
import { promisify } from "node:util";
import { gunzip, inflate, type ZlibOptions } from "node:zlib";
import { MalformedJsonError, PayloadTooLargeError, UnsupportedEncodingError } from "../errors.js";

type Decode = (buf: Buffer, options: ZlibOptions) => Promise<Buffer>;

/** Content codings a body may come in (server-side senders compress); `deflate` is the zlib format. */
const DECODERS: Record<string, { name: string; decode: Decode }> = {
  gzip: { name: "gzip", decode: promisify(gunzip) },
  "x-gzip": { name: "gzip", decode: promisify(gunzip) },
  deflate: { name: "deflate", decode: promisify(inflate) },
};
const ACCEPTED = ["gzip", "deflate"];

/** The one coding to undo, or null for an uncompressed body; anything else is a 415 naming it. */
function codingOf(req: IncomingMessage): { name: string; decode: Decode } | null {
  const header = req.headers["content-encoding"];
  if (header === undefined) return null;
  const codings = header
    .split(",")
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== "" && c !== "identity");
  if (codings.length === 0) return null;
  const decoder = codings.length === 1 ? DECODERS[codings[0]!] : undefined;
  if (!decoder) throw new UnsupportedEncodingError(JSON.stringify(header), ACCEPTED);
  return decoder;
}

/**
 * Reads the raw body, counting bytes as they arrive: a declared or streamed size over `limit` is
 * refused before anything is parsed, whether the body came with Content-Length or chunked. A gzip or
 * deflate body is decompressed here, and the limit holds for what it decompresses to as well: the
 * decoder stops at `limit` bytes of output, so a small body that inflates without end costs no more
 * than a body at the limit.
 */
export async function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
  let coding: ReturnType<typeof codingOf>;
  try {
    coding = codingOf(req);
  } catch (err) {
    req.resume();
    throw err;
  }
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) {
    req.resume();
    throw new PayloadTooLargeError(limit);
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      req.resume();
      throw new PayloadTooLargeError(limit);
    }
    chunks.push(chunk);
  }
  const raw = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
  if (!coding || raw.length === 0) return raw;
  try {
    return await coding.decode(raw, { maxOutputLength: limit });
  } catch (err) {
    if ((err as { code?: string }).code === "ERR_BUFFER_TOO_LARGE") throw new PayloadTooLargeError(limit);
    throw new MalformedJsonError(`Malformed ${coding.name} body: ${(err as Error).message}`);
  }
}
