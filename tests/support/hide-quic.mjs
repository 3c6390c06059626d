// Preloaded with `node --import <this file>`: the process behaves as on a platform without the QUIC
// library (an optional dependency with no build for linux-arm64): importing @matrixai/quic fails.
import { register } from "node:module";

register(new URL("./hide-package-hooks.mjs", import.meta.url), {
  data: { packages: ["@matrixai/quic"], why: "a platform without the QUIC library" },
});
