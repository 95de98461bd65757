/**
 * As redis-restart, with Redis run the way docs/ingestion.md recommends (`appendonly yes`,
 * `appendfsync everysec`): stopped cleanly under load for FAULT_OUTAGE_SECONDS and started again from
 * its AOF, so the dedup digests and the marker survive the outage.
 */
import { setTimeout as delay } from "node:timers/promises";
import { describeFaultScenario, outageMs } from "./scenario.js";
import { serverStoresMissing } from "./servers.js";

describeFaultScenario(
  {
    name: "redis-restart-aof",
    title: "Redis stopped and restarted from its AOF",
    stores: "server",
    redisAppendonly: true,
    restartsService: false,
    async inject({ redis, note }) {
      await redis!.stop();
      note("redis stopped (SIGTERM, appendonly yes)");
      // The outage itself: how long the store stays away is the fault, not a wait for a condition.
      await delay(outageMs());
      await redis!.start();
      note("redis started again from its AOF");
    },
  },
  await serverStoresMissing(),
);
