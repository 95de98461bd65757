import type { IncomingMessage } from "node:http";
import { PayloadTooLargeError } from "../errors.js";

/**
 * Reads the raw body, counting bytes as they arrive: a declared or streamed size over `limit` is
 * refused before anything is parsed, whether the body came with Content-Length or chunked.
 */
export async function readRawBody(req: IncomingMessage, limit: number): Promise<Buffer> {
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
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
}
