#!/usr/bin/env node
// The edge agent daemon, bundled by `npm run build` into dist/bundle/ (no TypeScript loader at run time).
import { loadCompiled } from "./compiled.mjs";
const { main } = await loadCompiled("edge-agent", "bundle/edge-agent.mjs");
await main();
