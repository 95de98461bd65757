import type { KvStore } from "../stores/kv/port.js";

/**
 * A per-pixel data version, bumped whenever new data for the pixel lands (events, synced records,
 * cost changes). Query cache keys include it, so a new figure is never hidden behind a cached one and
 * nothing ever has to be found and deleted (no SCAN).
 */
export class DataVersions {
  constructor(private readonly kv: KvStore) {}

  /** The global version (FX rates), the pixel's, and its account's (cost configuration). */
  async current(pixelId: string, accountId: string): Promise<string> {
    const [global, own, account] = await Promise.all([
      this.kv.get(key("*")),
      this.kv.get(key(pixelId)),
      this.kv.get(key(`account:${accountId}`)),
    ]);
    return `${global ?? "0"}.${own ?? "0"}.${account ?? "0"}`;
  }

  async bumpAccount(accountId: string): Promise<void> {
    await this.kv.incr(key(`account:${accountId}`));
  }

  async bumpGlobal(): Promise<void> {
    await this.kv.incr(key("*"));
  }

  async bump(pixelIds: readonly string[]): Promise<void> {
    for (const p of new Set(pixelIds)) await this.kv.incr(key(p));
  }
}

const key = (pixelId: string) => `dv:${pixelId}`;
