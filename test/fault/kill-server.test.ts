/**
 * SIGKILL of the service on server stores (its own Postgres and Redis, chDB in DATA_DIR; dedup digests
 * in Redis) under load, restarted at once on the same DATA_DIR and servers.
 */
import { describeFaultScenario, killAtInsertAndRestart } from "./scenario.js";
import { serverStoresMissing } from "./servers.js";

describeFaultScenario(
  {
    name: "kill-server",
    title: "SIGKILL and restart on Postgres + Redis",
    stores: "server",
    restartsService: true,
    inject: killAtInsertAndRestart,
  },
  await serverStoresMissing(),
);
