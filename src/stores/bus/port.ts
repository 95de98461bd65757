/*
 * The event bus: append-only streams read through consumer groups, with Redis Streams semantics.
 * Every group sees every message of a stream; within a group each message goes to one consumer and
 * stays pending until acknowledged. A pending message whose consumer went quiet is handed to another
 * one, so delivery is at-least-once: consumers must tolerate a message twice (dedupe on `key`).
 */

export interface BusMessage {
  /** Position in the stream (opaque, increasing); what `ack` takes. */
  id: string;
  /** The producer's idempotency key (an outbox row id, or a ULID): the same on every copy of a message. */
  key: string;
  payload: unknown;
  /** How many times this group has handed the message out, this delivery included. */
  deliveries: number;
}

export interface OutgoingMessage {
  key: string;
  /** Any JSON value; stored as JSON text, so key order is kept. */
  payload: unknown;
}

export interface ReadOptions {
  /** Most messages returned (default 100). */
  count?: number;
  /**
   * A message pending longer than this with another (or the same) consumer is taken over and
   * delivered again (default 30 s). 0 takes over every pending message.
   */
  claimIdleMs?: number;
}

export interface Bus {
  readonly kind: "redis" | "sql";
  /** Appends the messages in order; resolves once the bus durably holds them. Returns their ids. */
  publish(stream: string, messages: readonly OutgoingMessage[]): Promise<string[]>;
  /**
   * Messages for `consumer` of `group`: first pending ones taken over (idle longer than
   * `claimIdleMs`), then new ones. A group is created on first read and starts at the oldest message
   * still kept, so a consumer that subscribes late still gets what was published before it.
   */
  read(stream: string, group: string, consumer: string, options?: ReadOptions): Promise<BusMessage[]>;
  /** Marks messages done for the group; returns how many were pending. */
  ack(stream: string, group: string, ids: readonly string[]): Promise<number>;
  /**
   * Hands `consumer`'s pending messages back unhandled (it is stopping mid-batch): the group's next
   * read, by any consumer, takes them over at once instead of after `claimIdleMs`. Returns how many.
   */
  release(stream: string, group: string, consumer: string, ids: readonly string[]): Promise<number>;
  /**
   * Deletes messages at least `olderThanMs` old that every group has acknowledged (a message that
   * some group has not read or not acknowledged yet is kept). Returns how many were deleted.
   */
  trim(stream: string, olderThanMs: number): Promise<number>;
  /**
   * What `group` still has to do on `stream`: messages not acknowledged by it (never read, or read
   * and pending) and when the oldest of them was published (epoch ms; null when there is none).
   * A group that has not read yet owes every message still kept.
   */
  backlog(stream: string, group: string): Promise<Backlog>;
}

export interface Backlog {
  messages: number;
  oldestAt: number | null;
}

export const DEFAULT_READ = { count: 100, claimIdleMs: 30_000 } as const;

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,99}$/;

/** Stream, group and consumer names: 1-100 of letters, digits, `_ . : -`, starting alphanumeric. */
export function assertBusName(what: "stream" | "group" | "consumer", name: string): void {
  if (!NAME.test(name)) {
    throw new TypeError(
      `bus ${what} name "${name}" must be 1-100 of letters, digits, _ . : - (alphanumeric first)`,
    );
  }
}

/** Payloads travel as JSON text; a non-JSON entry (written by someone else) is passed on as its text. */
export function decodePayload(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
