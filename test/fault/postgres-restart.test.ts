/**
 * Postgres stopped under load (`pg_ctl stop -m fast`: sessions ended, new connections refused) for
 * FAULT_OUTAGE_SECONDS (default 3), then started again.
 */
import { setTimeout as delay } from "node:timers/promises";
import { describeFaultScenario, outageMs } from "./scenario.js";
import { serverStoresMissing } from "./servers.js";

describeFaultScenario(
  {
    name: "postgres-restart",
    title: "Postgres stopped (fast) and restarted",
    stores: "server",
    restartsService: false,
    async inject({ postgres, note }) {
      await postgres!.stop();
      note("postgres stopped (pg_ctl stop -m fast)");
      // The outage itself: how long the store stays away is the fault, not a wait for a condition.
      await delay(outageMs());
      await postgres!.start();
      note("postgres started again");
    },
  },
  await serverStoresMissing(),
);
