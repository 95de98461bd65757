/**
 * SIGKILL of the service on embedded stores (PGlite, chDB, in-process cache; dedup ids in PGlite)
 * under load, twice — an INSERT under way, then one just landed — restarted at once each time on the
 * same DATA_DIR.
 */
import { describeFaultScenario, killTwiceAndRestart } from "./scenario.js";

describeFaultScenario(
  {
    name: "kill-embedded",
    title: "SIGKILL and restart on embedded stores",
    stores: "embedded",
    restartsService: true,
    inject: killTwiceAndRestart,
  },
  undefined,
);
