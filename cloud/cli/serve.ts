// `cloud-peer` (serve): starts the peer and shuts it down gracefully on SIGINT/SIGTERM.
import { loadConfig, type ConfigInput } from "../config.js";
import { startCloudPeer } from "../server.js";

export async function serve(flags: ConfigInput): Promise<void> {
  const config = loadConfig(flags);
  const peer = await startCloudPeer(config);
  peer.svc.log.info({ url: peer.url, data: config.dataDir }, "cloud peer listening");
  process.stdout.write(`cloud-peer listening on ${peer.url} (API ${peer.url}/api, OpenAPI ${peer.url}/api/openapi.json)\n`);
  if (peer.metricsUrl) process.stdout.write(`cloud-peer metrics on ${peer.metricsUrl}\n`);
  const stop = (signal: string) => {
    peer.svc.log.info({ signal }, "shutting down");
    peer.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once("SIGINT", () => stop("SIGINT"));
  process.once("SIGTERM", () => stop("SIGTERM"));
}
