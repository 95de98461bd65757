/**
 * SIGKILL of the service on embedded stores (PGlite, chDB, in-process cache; dedup ids in PGlite)
 * under load, restarted at once on the same DATA_DIR.
 */
import { describeFaultScenario, killAtInsertAndRestart } from "./scenario.js";

describeFaultScenario(
  {
    name: "kill-embedded",
    title: "SIGKILL and restart on embedded stores",
    stores: "embedded",
    restartsService: true,
    inject: killAtInsertAndRestart,
  },
  undefined,
);
