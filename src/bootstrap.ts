import type { Config } from "./config.js";
import { SCOPES } from "./keys/scopes.js";
import type { Services } from "./services.js";
import type { Stores } from "./stores/index.js";
import { migrate } from "./stores/migrations.js";

export { migrate };

export const DEMO_PIXEL_ID = "demo";

/**
 * First start on an empty embedded store: a demo account, pixel and an all-scopes key, so a
 * newcomer can query right away. Returns the raw key (shown once) or null when nothing was made.
 */
export async function createDemoOnFirstStart(
  config: Config,
  stores: Stores,
  services: Services,
): Promise<{ pixelId: string; key: string } | null> {
  if (!config.DEMO_ON_FIRST_START || stores.sql.kind !== "pglite") return null;
  if ((await services.pixels.count()) > 0) return null;
  const { pixel } = await services.pixels.create({
    id: DEMO_PIXEL_ID,
    name: "Demo Store",
    accountName: "Demo Store",
  });
  const { key } = await services.keys.create({
    pixelId: pixel.id,
    scopes: [...SCOPES],
    name: "demo (all scopes)",
  });
  return { pixelId: pixel.id, key };
}
