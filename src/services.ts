import { AccountService } from "./accounts/service.js";
import type { Config } from "./config.js";
import { ApiKeyService } from "./keys/service.js";
import type { Logger } from "./log.js";
import { PixelService } from "./pixels/service.js";
import type { Stores } from "./stores/index.js";

/** Every business service, built once per process over the opened stores. */
export interface Services {
  keys: ApiKeyService;
  accounts: AccountService;
  pixels: PixelService;
}

export function buildServices(stores: Stores, config: Config, log: Logger): Services {
  return {
    keys: new ApiKeyService(stores.sql, stores.keySecret, config.KEY_CACHE_MS, (err) =>
      log.warn({ err }, "could not record key last_used_at"),
    ),
    accounts: new AccountService(stores.sql),
    pixels: new PixelService(stores.sql),
  };
}
