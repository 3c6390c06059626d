#!/usr/bin/env node
// agentctl, compiled by `npm run build` into dist/ (no TypeScript loader at run time).
import { loadCompiled } from "./compiled.mjs";
const { main } = await loadCompiled("agentctl", "runtime/cli/agentctl.js");
await main();
