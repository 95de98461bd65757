/**
 * SIGKILL of the service on server stores (its own Postgres and Redis, chDB in DATA_DIR; dedup
 * digests in Redis) under load, twice — an INSERT under way, then one just landed — restarted at once
 * each time on the same DATA_DIR and servers.
 */
import { describeFaultScenario, killTwiceAndRestart } from "./scenario.js";
import { serverStoresMissing } from "./servers.js";

describeFaultScenario(
  {
    name: "kill-server",
    title: "SIGKILL and restart on Postgres + Redis",
    stores: "server",
    restartsService: true,
    inject: killTwiceAndRestart,
  },
  await serverStoresMissing(),
);
