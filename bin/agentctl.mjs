#!/usr/bin/env node
// Runs agentctl's TypeScript entry point through tsx, so no build step is needed.
import { register } from "tsx/esm/api";
register();
const { main } = await import("../runtime/cli/agentctl.ts");
await main();
