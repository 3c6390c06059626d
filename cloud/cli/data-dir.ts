// Maintenance commands (token create, keys ...) work on an existing peer's data. Pointed at a wrong
// directory they must not create a fresh database with a new `admin` (whose temporary password would
// end up in the output a script reads as the token).
import fs from "node:fs";
import path from "node:path";

export function requireDatabase(dataDir: string): void {
  const file = path.join(dataDir, "cloud.db");
  if (!fs.existsSync(file)) throw new Error(`no cloud-peer database at ${file} (start cloud-peer once with this --data, or pass the right --data)`);
}
