// `cloud-peer` (serve): starts the peer and shuts it down gracefully on SIGINT/SIGTERM.
import fs from "node:fs";
import { adminPasswordFile } from "../accounts/service/admin-password-file.js";
import { loadConfig, type CloudConfig, type ConfigInput } from "../config.js";
import { startCloudPeer } from "../server.js";
import { isPostgresUrl } from "../database/open.js";

/** How to get into a peer whose `admin` still has the first start's temporary password (a URL may hold a password: not repeated). */
const recoveryHint = (config: CloudConfig, file: string) =>
  `the super user "admin" has a temporary password, kept in ${file} until it is changed; ` +
  `or set a new one with: cloud-peer admin reset-password --user admin ${isPostgresUrl(config.database) ? "with the same --database (or CLOUD_DATABASE)" : `--data ${config.dataDir}`}`;

export async function serve(flags: ConfigInput): Promise<void> {
  const config = loadConfig(flags);
  const file = adminPasswordFile(config.dataDir);
  let peer: Awaited<ReturnType<typeof startCloudPeer>>;
  try {
    peer = await startCloudPeer(config);
  } catch (err) {
    // A start that fails after the database was made (say, the port is taken) has already created `admin`.
    if (fs.existsSync(file)) throw new Error(`${(err as Error).message}\n${recoveryHint(config, file)}`);
    throw err;
  }
  // Handlers before the banner: a supervisor that signals as soon as it reads the banner finds them in place.
  const stop = (signal: string) => {
    peer.svc.log.info({ signal }, "shutting down");
    peer.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  // Renewed certificate files take effect for new connections; open ones (iSCP streams) are not dropped.
  // (Always handled: `systemctl reload` of a peer without TLS must not end it, SIGHUP's default.)
  process.on("SIGHUP", () => {
    if (config.tlsCert) peer.reloadTls();
    else peer.svc.log.info("SIGHUP: nothing to reload (no --tls-cert)");
  });
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
  peer.svc.log.info({ url: peer.url, data: config.dataDir, durability: config.durability }, "cloud peer listening");
  // One write: a reader that waits for the "listening" line gets the lines that belong with it at once.
  const banner = [`cloud-peer listening on ${peer.url} (API ${peer.url}/api, OpenAPI ${peer.url}/api/openapi.json)`];
  if (fs.existsSync(file)) banner.push(recoveryHint(config, file));
  if (peer.metricsUrl) banner.push(`cloud-peer metrics on ${peer.metricsUrl}`);
  process.stdout.write(banner.join("\n") + "\n");
}
