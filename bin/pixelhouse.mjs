#!/usr/bin/env node
// Runs the TypeScript sources directly (tsx compiles on load and caches), so there is no build step.
import { register } from "tsx/esm/api";

register();
await import("../src/cli/main.ts");
