#!/usr/bin/env node
// Runs the edge agent daemon's TypeScript entry point through tsx, so no build step is needed.
import { register } from "tsx/esm/api";
register();
const { main } = await import("../runtime/daemon.ts");
await main();
