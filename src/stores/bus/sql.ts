import type { SqlStore } from "../sql/port.js";
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
 * Embedded Postgres gathers no statistics, and a stream keeps every message for the retention period
 * (7 days: millions of messages on a busy ingest). So the statements below reach messages only through
 * the primary key's range from a group's position (`id > (SELECT …)`: an index condition, where a join
 * to the group's row was a filter over every message of the stream — a read took 140–400 ms with 300,000
 * messages kept) or one probe per pending id (a LATERAL subquery with a LIMIT, which the planner cannot
 * turn into a scan). `test/integration/bus-plans.test.ts` checks the plans.
 */

/**
 * What a group owes: messages after its position, and those it was handed and has not acknowledged
 * (always at or before its position). A group with no row yet owes every message still kept.
 */
export const BACKLOG_SQL = `WITH last AS (
  SELECT coalesce((SELECT last_id FROM bus_groups WHERE stream = $1 AND group_name = $2), 0) AS id
),
owed AS (
  SELECT m.created_at FROM bus_messages m WHERE m.stream = $1 AND m.id > (SELECT id FROM last)
  UNION ALL
  SELECT m.created_at FROM bus_pending p
  CROSS JOIN LATERAL (
    SELECT created_at FROM bus_messages m WHERE m.stream = $1 AND m.id = p.id LIMIT 1
  ) AS m
  WHERE p.stream = $1 AND p.group_name = $2 AND p.id <= (SELECT id FROM last)
)
SELECT count(*)::text AS messages, (extract(epoch FROM min(created_at)) * 1000)::bigint::text AS oldest
FROM owed`;

/**
 * One read (see `readOnce`): $1 stream, $2 group, $3 consumer, $4 claim idle seconds, $5 count.
 * A null row when the group has no row.
 */
export const READ_SQL = `WITH g AS (
  SELECT last_id FROM bus_groups WHERE stream = $1 AND group_name = $2 FOR UPDATE
),
claimed AS (
  UPDATE bus_pending p SET consumer = $3, delivered_at = clock_timestamp(), deliveries = p.deliveries + 1
  FROM (SELECT id FROM bus_pending
        WHERE stream = $1 AND group_name = $2 AND delivered_at <= clock_timestamp() - make_interval(secs => $4)
          AND EXISTS (SELECT 1 FROM g)
        ORDER BY id LIMIT $5) c
  WHERE p.stream = $1 AND p.group_name = $2 AND p.id = c.id
    AND p.delivered_at <= clock_timestamp() - make_interval(secs => $4)
  RETURNING p.id, p.deliveries
),
fresh AS (
  INSERT INTO bus_pending (stream, group_name, id, consumer, delivered_at, deliveries)
  SELECT $1, $2, m.id, $3, clock_timestamp(), 1 FROM bus_messages m
  WHERE m.stream = $1 AND m.id > (SELECT last_id FROM g) ORDER BY m.id
  LIMIT greatest(0, $5 - (SELECT count(*) FROM claimed))
  RETURNING id, deliveries
),
moved AS (
  UPDATE bus_groups SET last_id = (SELECT max(id) FROM fresh)
  WHERE stream = $1 AND group_name = $2 AND EXISTS (SELECT 1 FROM fresh)
),
handed AS (SELECT id, deliveries FROM claimed UNION ALL SELECT id, deliveries FROM fresh)
SELECT m.id AS n, m.id::text AS id, m.key, m.payload, h.deliveries
FROM handed h JOIN bus_messages m ON m.stream = $1 AND m.id = h.id
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL WHERE NOT EXISTS (SELECT 1 FROM g)
ORDER BY n`;

/**
 * Messages up to this many are bound one parameter per key and payload (a VALUES list); more go as
 * two text arrays. A payload inside an array parameter is parsed again as an array literal, character
 * by character with its quotes escaped: a 740 KB sightings message took ~40 ms to publish that way on
 * embedded Postgres, ~21 ms as a parameter of its own.
 */
const VALUES_MAX = 1000;

/** The rows (k, p, ord) of a publish of `n` messages: placeholders from $3 on, or the arrays $3 and $4. */
function messageRows(n: number): string {
  if (n > VALUES_MAX) return "unnest($3::text[], $4::text[]) WITH ORDINALITY";
  const rows = new Array<string>(n);
  for (let i = 0; i < n; i++) rows[i] = `($${3 + 2 * i}::text, $${4 + 2 * i}::text, ${i + 1})`;
  return `(VALUES ${rows.join(", ")})`;
}

function interleave(keys: readonly string[], payloads: readonly string[]): string[] {
  const out = new Array<string>(2 * keys.length);
  for (let i = 0; i < keys.length; i++) {
    out[2 * i] = keys[i]!;
    out[2 * i + 1] = payloads[i]!;
  }
  return out;
}

/** A consumer group's key in the set of groups a process has made sure of. */
const groupName = (stream: string, group: string) => `${stream}\u0000${group}`;

/*
 * The bus in the SQL store (used when no Redis is configured): durable like the rest of the OLTP
 * data, so nothing published or pending is lost across restarts. Tables (sql/postgres/005):
 * `bus_streams` hands out per-stream ids, `bus_messages` holds entries, `bus_groups` each group's
 * last delivered id, `bus_pending` what a group handed out and has not acknowledged.
 *
 * Ids come from a counter row locked until the publishing statement commits, so a later id is
 * always committed after an earlier one: a reader that moved past id n never misses an id below it.
 */
export class SqlBus implements Bus {
  readonly kind = "sql" as const;

  /** Groups whose row this process has made sure of (see `ensureGroup`). */
  private readonly groups = new Set<string>();

  constructor(private readonly sql: SqlStore) {}

  async publish(stream: string, messages: readonly OutgoingMessage[]): Promise<string[]> {
    assertBusName("stream", stream);
    if (messages.length === 0) return [];
    const keys = messages.map((m) => m.key);
    const payloads = messages.map((m) => JSON.stringify(m.payload ?? null));
    const { rows } = await this.sql.query<{ id: string }>(
      `WITH s AS (
         INSERT INTO bus_streams AS s (stream, last_id) VALUES ($1, $2)
         ON CONFLICT (stream) DO UPDATE SET last_id = s.last_id + $2
         RETURNING last_id
       )
       INSERT INTO bus_messages (stream, id, key, payload)
       SELECT $1, s.last_id - $2 + t.ord, t.k, t.p
       FROM s, ${messageRows(messages.length)} AS t(k, p, ord)
       RETURNING id::text AS id`,
      messages.length > VALUES_MAX
        ? [stream, messages.length, keys, payloads]
        : [stream, messages.length, ...interleave(keys, payloads)],
    );
    return rows.map((r) => r.id).sort((a, b) => Number(a) - Number(b));
  }

  async read(
    stream: string,
    group: string,
    consumer: string,
    options: ReadOptions = {},
  ): Promise<BusMessage[]> {
    assertBusName("stream", stream);
    assertBusName("group", group);
    assertBusName("consumer", consumer);
    const count = Math.max(1, options.count ?? DEFAULT_READ.count);
    const idleSeconds = Math.max(0, options.claimIdleMs ?? DEFAULT_READ.claimIdleMs) / 1000;
    await this.ensureGroup(stream, group);
    const once = () => this.readOnce(stream, group, consumer, count, idleSeconds);
    let got = await once();
    if (got === null) {
      // The group's row was deleted while this process read it (an abandoned group is deleted by
      // hand, see docs/events.md): it is made again, starting at the oldest message kept.
      this.groups.delete(groupName(stream, group));
      await this.ensureGroup(stream, group);
      got = (await once()) ?? [];
    }
    return got;
  }

  /** One read; null when the group has no row. */
  private async readOnce(
    stream: string,
    group: string,
    consumer: string,
    count: number,
    idleSeconds: number,
  ): Promise<BusMessage[] | null> {
    // One statement (one round trip, no transaction to open and close): `g` locks the group's row, so
    // readers of a group take turns, and hands out its latest last_id even when another reader moved
    // it while this one waited. What the statement reads of bus_messages and bus_pending comes from
    // its snapshot, taken before that wait; it stays right because
    // - ids commit in order (see above), so the snapshot holds every message up to some id, and the
    //   messages after the latest last_id that it holds are exactly the ones nobody took yet;
    // - a claim re-checks each pending row's delivered_at on the row as it is now (Postgres re-reads
    //   a row another transaction changed before updating it), so one claimed meanwhile is skipped.
    const { rows } = await this.sql.query<{
      id: string | null;
      key: string;
      payload: string;
      deliveries: number;
    }>(READ_SQL, [stream, group, consumer, idleSeconds, count]);
    if (rows.some((r) => r.id === null)) return null;
    return rows.map((r) => ({
      id: r.id as string,
      key: r.key,
      payload: decodePayload(r.payload),
      deliveries: Number(r.deliveries),
    }));
  }

  /** A group is created on its first read; after that, this process assumes its row until a read finds none. */
  private async ensureGroup(stream: string, group: string): Promise<void> {
    const name = groupName(stream, group);
    if (this.groups.has(name)) return;
    await this.sql.query(
      "INSERT INTO bus_groups (stream, group_name) VALUES ($1, $2) ON CONFLICT (stream, group_name) DO NOTHING",
      [stream, group],
    );
    this.groups.add(name);
  }

  async ack(stream: string, group: string, ids: readonly string[]): Promise<number> {
    const valid = ids.filter((id) => /^\d{1,18}$/.test(id));
    if (valid.length === 0) return 0;
    const r = await this.sql.query(
      "DELETE FROM bus_pending WHERE stream = $1 AND group_name = $2 AND id = ANY($3::bigint[])",
      [stream, group, valid],
    );
    return r.rowCount;
  }

  async release(stream: string, group: string, consumer: string, ids: readonly string[]): Promise<number> {
    const valid = ids.filter((id) => /^\d{1,18}$/.test(id));
    if (valid.length === 0) return 0;
    const r = await this.sql.query(
      `UPDATE bus_pending SET delivered_at = '-infinity'
       WHERE stream = $1 AND group_name = $2 AND consumer = $3 AND id = ANY($4::bigint[])`,
      [stream, group, consumer, valid],
    );
    return r.rowCount;
  }

  async trim(stream: string, olderThanMs: number): Promise<number> {
    const r = await this.sql.query(
      `DELETE FROM bus_messages m
       WHERE m.stream = $1 AND m.created_at <= clock_timestamp() - make_interval(secs => $2)
         AND NOT EXISTS (SELECT 1 FROM bus_groups g WHERE g.stream = $1 AND g.last_id < m.id)
         AND NOT EXISTS (SELECT 1 FROM bus_pending p WHERE p.stream = $1 AND p.id = m.id)`,
      [stream, Math.max(0, olderThanMs) / 1000],
    );
    return r.rowCount;
  }

  async backlog(stream: string, group: string): Promise<Backlog> {
    assertBusName("stream", stream);
    assertBusName("group", group);
    const { rows } = await this.sql.query<{ messages: string; oldest: string | null }>(BACKLOG_SQL, [
      stream,
      group,
    ]);
    const r = rows[0];
    return { messages: Number(r?.messages ?? 0), oldestAt: r?.oldest == null ? null : Number(r.oldest) };
  }
}
