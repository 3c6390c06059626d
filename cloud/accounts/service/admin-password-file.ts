// The first start's temporary password of `admin`, kept in the data directory (owner-only) until it is
// changed, so an operator who missed the one line printed at that start can still sign in. It goes as
// soon as the password it holds stops being the user's: the user changed it, or it was reset.
import fs from "node:fs";
import path from "node:path";
import type { Services } from "../../services.js";
import { verifyPassword } from "./password-rules.js";

export const ADMIN_PASSWORD_FILE = "initial-admin-password";

export const adminPasswordFile = (dataDir: string) => path.join(dataDir, ADMIN_PASSWORD_FILE);

/** Writes the file (0600 whatever the umask); a failure is logged, the password was printed anyway. */
export function writeAdminPasswordFile(svc: Pick<Services, "config" | "log">, password: string): string | undefined {
  const file = adminPasswordFile(svc.config.dataDir);
  try {
    fs.writeFileSync(file, `${password}\n`, { mode: 0o600 });
    fs.chmodSync(file, 0o600);
    return file;
  } catch (err) {
    svc.log.warn({ file, err: (err as Error).message }, "could not write the admin password file");
    return undefined;
  }
}

/** Removes the file when it holds the password whose hash was `oldHash` (just replaced). */
export async function forgetReplacedAdminPassword(svc: Services, oldHash: string): Promise<void> {
  const file = adminPasswordFile(svc.config.dataDir);
  let kept: string;
  try {
    kept = fs.readFileSync(file, "utf8").trim();
  } catch {
    return;
  }
  if (!(await verifyPassword(kept, oldHash))) return;
  try {
    fs.rmSync(file, { force: true });
  } catch (err) {
    svc.log.warn({ file, err: (err as Error).message }, "could not remove the admin password file");
  }
}
