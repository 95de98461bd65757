// The entry of the identity graph's thread: Node starts a worker without the TypeScript loader the
// main thread runs under, so it registers tsx (compiling on load, cached) and loads the host.
import { register } from "tsx/esm/api";

register();
await import("./level-thread-host.ts");
