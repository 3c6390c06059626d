#!/usr/bin/env node
// The edge agent daemon, compiled by `npm run build` into dist/ (no TypeScript loader at run time).
import { loadCompiled } from "./compiled.mjs";
const { main } = await loadCompiled("edge-agent", "runtime/cli/edge-agent.js");
await main();
