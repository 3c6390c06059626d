// Preloaded with `node --import <this file>`: the process behaves as on a device where sqlite3 (an optional
// dependency whose native binary is downloaded or built at install) could be neither: importing it fails.
import { register } from "node:module";

register(new URL("./hide-package-hooks.mjs", import.meta.url), {
  data: { packages: ["sqlite3"], why: "sqlite3 could not be installed" },
});
