/**
 * Redis stopped under load for FAULT_OUTAGE_SECONDS (default 3) and started again WITHOUT persistence
 * (`--save "" --appendonly no`): the dedup digests, the marker and every lease are gone.
 */
import { setTimeout as delay } from "node:timers/promises";
import { describeFaultScenario, outageMs } from "./scenario.js";
import { serverStoresMissing } from "./servers.js";

describeFaultScenario(
  {
    name: "redis-restart",
    title: "Redis stopped and restarted without persistence",
    stores: "server",
    redisAppendonly: false,
    restartsService: false,
    identityUnchecked:
      "the sightings published before the outage lived in that Redis's streams, which it comes back without",
    async inject({ redis, note }) {
      await redis!.stop();
      note("redis stopped (SIGTERM, no persistence)");
      // The outage itself: how long the store stays away is the fault, not a wait for a condition.
      await delay(outageMs());
      await redis!.start();
      note("redis started again, empty");
    },
  },
  await serverStoresMissing(),
);
