import type { Redis } from "ioredis";
import { CircuitBreaker } from "../breaker.js";
import { KvError, KvUnavailableError } from "../kv/port.js";
import { guardRedis, toKvError } from "../kv/redis.js";
import {
  assertBusName,
  type Backlog,
  type Bus,
  type BusMessage,
  DEFAULT_READ,
  decodePayload,
  type OutgoingMessage,
  type ReadOptions,
} from "./port.js";

/*
 * Redis Streams: one stream per bus stream at `<prefix><stream>` (the public one is
 * `pixelhouse:events` with the default prefix). Entries carry two fields, `key` and `payload` (JSON
 * text). Groups are XGROUP CREATE … 0 MKSTREAM, reads XAUTOCLAIM then XREADGROUP `>`, acks XACK.
 * Reads never BLOCK: the client is shared with the rest of the process, and a blocked connection
 * would stall every other command on it.
 */

type Entry = [id: string, fields: string[] | null];

/** About 31 years: "idle since long ago", below the epoch milliseconds as XCLAIM IDLE requires. */
const LONG_IDLE_MS = 1_000_000_000_000;

/** Stream ids are `ms-seq`; compared as numbers, never as text. */
const parseId = (id: string): [bigint, bigint] => {
  const [ms, seq] = id.split("-");
  return [BigInt(ms ?? "0"), BigInt(seq ?? "0")];
};
const idLess = (a: string, b: string) => {
  const [am, as] = parseId(a);
  const [bm, bs] = parseId(b);
  return am < bm || (am === bm && as < bs);
};
const nextId = (id: string) => {
  const [ms, seq] = parseId(id);
  return `${ms}-${seq + 1n}`;
};

/**
 * The entries of a one-stream XREADGROUP reply. RESP3 (ioredis' default) answers a map, which
 * ioredis flattens to `[key, entries]`; RESP2 answers `[[key, entries]]`; no message is null.
 */
function entriesOf(reply: unknown): Entry[] {
  if (!Array.isArray(reply) || reply.length === 0) return [];
  const pair = Array.isArray(reply[0]) ? reply[0] : reply;
  return Array.isArray(pair[1]) ? (pair[1] as Entry[]) : [];
}

function field(fields: readonly string[], name: string): string | undefined {
  for (let i = 0; i + 1 < fields.length; i += 2) if (fields[i] === name) return fields[i + 1];
  return undefined;
}

export class RedisBus implements Bus {
  readonly kind = "redis" as const;
  private readonly groups = new Set<string>();
  /** XAUTOCLAIM cursor per stream and group, so successive reads walk the pending list. */
  private readonly cursors = new Map<string, string>();

  constructor(
    private readonly redis: Redis,
    private readonly prefix = "pixelhouse:",
    /** The breaker of the KV store on the same client: one Redis, one verdict on whether it is up. */
    private readonly breaker = new CircuitBreaker(),
  ) {}

  private keyOf(stream: string): string {
    assertBusName("stream", stream);
    return this.prefix + stream;
  }

  async publish(stream: string, messages: readonly OutgoingMessage[]): Promise<string[]> {
    const key = this.keyOf(stream);
    if (messages.length === 0) return [];
    // MULTI: the batch is appended whole and in order, or not at all.
    const multi = this.redis.multi();
    for (const m of messages)
      multi.xadd(key, "*", "key", m.key, "payload", JSON.stringify(m.payload ?? null));
    const results = await this.wrap(() => multi.exec());
    if (!results) throw new KvUnavailableError("the bus publish transaction was aborted");
    return results.map(([err, id]) => {
      if (err) throw toKvError(err);
      return String(id);
    });
  }

  async read(
    stream: string,
    group: string,
    consumer: string,
    options: ReadOptions = {},
  ): Promise<BusMessage[]> {
    assertBusName("group", group);
    assertBusName("consumer", consumer);
    const key = this.keyOf(stream);
    try {
      return await this.readOnce(key, group, consumer, options);
    } catch (err) {
      // The stream or group was deleted behind our back: create it again and retry once.
      if (!String((err as Error).message).includes("NOGROUP")) throw err;
      this.groups.delete(`${key}\u0000${group}`);
      return this.readOnce(key, group, consumer, options);
    }
  }

  private async readOnce(
    key: string,
    group: string,
    consumer: string,
    options: ReadOptions,
  ): Promise<BusMessage[]> {
    const count = Math.max(1, options.count ?? DEFAULT_READ.count);
    const minIdle = Math.max(0, Math.round(options.claimIdleMs ?? DEFAULT_READ.claimIdleMs));
    await this.ensureGroup(key, group);
    const cursorKey = `${key}\u0000${group}`;
    const [cursor, claimedRaw] = (await this.wrap(() =>
      this.redis.call(
        "XAUTOCLAIM",
        key,
        group,
        consumer,
        String(minIdle),
        this.cursors.get(cursorKey) ?? "0-0",
        "COUNT",
        String(count),
      ),
    )) as [string, Entry[]];
    this.cursors.set(cursorKey, cursor);
    // Entries trimmed while pending come back without fields (Redis 6.2) or only in the third part.
    const claimed = claimedRaw.filter((e): e is [string, string[]] => Array.isArray(e?.[1]));
    const deliveries = await this.deliveryCounts(key, group, consumer, claimed);
    const out: BusMessage[] = claimed.map(([id, fields]) => ({
      id,
      key: field(fields, "key") ?? "",
      payload: decodePayload(field(fields, "payload") ?? "null"),
      deliveries: deliveries.get(id) ?? 2,
    }));
    const room = count - out.length;
    if (room > 0) {
      const fresh = await this.wrap(() =>
        this.redis.call("XREADGROUP", "GROUP", group, consumer, "COUNT", String(room), "STREAMS", key, ">"),
      );
      for (const [id, fields] of entriesOf(fresh)) {
        if (!fields) continue;
        out.push({
          id,
          key: field(fields, "key") ?? "",
          payload: decodePayload(field(fields, "payload") ?? "null"),
          deliveries: 1,
        });
      }
    }
    return out;
  }

  /** Delivery counters of taken-over entries (XAUTOCLAIM does not return them). */
  private async deliveryCounts(
    key: string,
    group: string,
    consumer: string,
    claimed: readonly [string, string[]][],
  ): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    if (claimed.length === 0) return counts;
    let lo = claimed[0]![0];
    let hi = lo;
    for (const [id] of claimed) {
      if (idLess(id, lo)) lo = id;
      if (idLess(hi, id)) hi = id;
    }
    const rows = (await this.wrap(() =>
      this.redis.call("XPENDING", key, group, lo, hi, String(claimed.length * 2 + 10), consumer),
    )) as [string, string, number, number][];
    for (const [id, , , n] of rows) counts.set(id, Number(n));
    return counts;
  }

  private async ensureGroup(key: string, group: string): Promise<void> {
    const id = `${key}\u0000${group}`;
    if (this.groups.has(id)) return;
    try {
      // From 0: a group created after messages were published still receives them.
      await this.wrap(() => this.redis.call("XGROUP", "CREATE", key, group, "0", "MKSTREAM"));
    } catch (err) {
      if (
        !(err instanceof KvError) ||
        err instanceof KvUnavailableError ||
        !err.message.includes("BUSYGROUP")
      )
        throw err;
    }
    this.groups.add(id);
  }

  async ack(stream: string, group: string, ids: readonly string[]): Promise<number> {
    const key = this.keyOf(stream);
    const valid = ids.filter((id) => /^\d+-\d+$/.test(id));
    if (valid.length === 0) return 0;
    return this.wrap(() => this.redis.xack(key, group, ...valid));
  }

  async release(stream: string, group: string, consumer: string, ids: readonly string[]): Promise<number> {
    const key = this.keyOf(stream);
    const valid = ids.filter((id) => /^\d+-\d+$/.test(id));
    if (valid.length === 0) return 0;
    // Which of them this consumer still holds (another may have taken one over meanwhile).
    const held = new Set<string>();
    for (const id of valid) {
      const rows = (await this.wrap(() =>
        this.redis.call("XPENDING", key, group, id, id, "1", consumer),
      )) as unknown[];
      if (rows.length > 0) held.add(id);
    }
    if (held.size === 0) return 0;
    // XCLAIM to itself with an idle time of decades: any consumer's next XAUTOCLAIM takes them.
    // JUSTID leaves the delivery counter alone.
    const claimed = (await this.wrap(() =>
      this.redis.call("XCLAIM", key, group, consumer, "0", ...held, "IDLE", String(LONG_IDLE_MS), "JUSTID"),
    )) as string[];
    return claimed.length;
  }

  async trim(stream: string, olderThanMs: number): Promise<number> {
    const key = this.keyOf(stream);
    if (!(await this.wrap(() => this.redis.exists(key)))) return 0;
    // Keep everything from the oldest entry some group still needs: its oldest pending entry, or
    // the first entry after the last one it was given.
    // MINID keeps ids at or above the floor: entries of the cutoff millisecond itself go too.
    let floor = `${Math.max(0, Date.now() - Math.max(0, olderThanMs) + 1)}-0`;
    const groups = (await this.wrap(() => this.redis.call("XINFO", "GROUPS", key))) as (string | number)[][];
    for (const info of groups) {
      const get = (name: string) => info[info.indexOf(name) + 1];
      const name = String(get("name"));
      let need = nextId(String(get("last-delivered-id")));
      if (Number(get("pending")) > 0) {
        const summary = (await this.wrap(() => this.redis.call("XPENDING", key, name))) as [
          number,
          string | null,
        ];
        if (summary[1] && idLess(summary[1], need)) need = summary[1];
      }
      if (idLess(need, floor)) floor = need;
    }
    return this.wrap(() => this.redis.xtrim(key, "MINID", floor));
  }

  async backlog(stream: string, group: string): Promise<Backlog> {
    assertBusName("group", group);
    const key = this.keyOf(stream);
    if (!(await this.wrap(() => this.redis.exists(key)))) return { messages: 0, oldestAt: null };
    const groups = (await this.wrap(() => this.redis.call("XINFO", "GROUPS", key))) as (string | number)[][];
    const info = groups.find((g) => String(g[g.indexOf("name") + 1]) === group);
    const first = async (from: string) => {
      const rows = (await this.wrap(() => this.redis.xrange(key, from, "+", "COUNT", 1))) as Entry[];
      return rows[0] ? Number(parseId(rows[0][0])[0]) : null;
    };
    if (!info) {
      const messages = await this.wrap(() => this.redis.xlen(key));
      return { messages, oldestAt: await first("-") };
    }
    const get = (name: string) => info[info.indexOf(name) + 1];
    const pending = Number(get("pending") ?? 0);
    const after = nextId(String(get("last-delivered-id")));
    // `lag` (Redis 7) is null when entries were deleted in between: count the unread ones then.
    const lag = get("lag");
    const unread =
      lag === null || lag === undefined
        ? ((await this.wrap(() => this.redis.xrange(key, after, "+"))) as Entry[]).length
        : Number(lag);
    let oldestAt = unread > 0 ? await first(after) : null;
    if (pending > 0) {
      const summary = (await this.wrap(() => this.redis.call("XPENDING", key, group))) as [
        number,
        string | null,
      ];
      if (summary[1]) {
        const ms = Number(parseId(summary[1])[0]);
        oldestAt = oldestAt === null ? ms : Math.min(oldestAt, ms);
      }
    }
    return { messages: pending + unread, oldestAt };
  }

  private wrap<T>(fn: () => Promise<T>): Promise<T> {
    return guardRedis(this.breaker, fn);
  }
}
