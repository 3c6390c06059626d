#!/usr/bin/env node
// The cloud peer, compiled by `npm run build` into dist/ (no TypeScript loader at run time).
import { loadCompiled } from "./compiled.mjs";
await loadCompiled("cloud-peer", "cloud/main.js");
