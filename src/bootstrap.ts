import type { Config } from "./config.js";
import { SCOPES } from "./keys/scopes.js";
import type { Services } from "./services.js";
import type { Stores } from "./stores/index.js";

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
  // The service's own origin, so pixel.js can be tried from a local page right away.
  await services.pixels.updateOrigins(
    pixel.id,
    [`http://localhost:${config.PORT}`, `http://127.0.0.1:${config.PORT}`],
    [],
  );
  return { pixelId: pixel.id, key };
}
