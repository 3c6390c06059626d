// The real cloud peer for agent tests: a temp-dir peer with one edge (name and nickname set) made
// through its API, whose client secret the agent authenticates with.
import { adminToken, caller } from "../cloud/accounts/helpers.js";
import { startTestPeer, type TestPeer } from "../cloud/harness.js";

export interface RealCloud {
  url: string;
  peer: TestPeer;
  edge: { uuid: string; secret: string; name: string; nickname: string };
  close(): Promise<void>;
}

export async function startRealCloud(): Promise<RealCloud> {
  const peer = await startTestPeer();
  const call = caller(peer, await adminToken(peer));
  const name = "edge-name-1";
  const nickname = "Edge One";
  const r = await call("/auth/edges", { method: "POST", json: { name, nickname } });
  if (r.status !== 201) throw new Error(`cannot create the edge: ${r.status} ${JSON.stringify(r.body)}`);
  return {
    url: peer.url,
    peer,
    edge: { uuid: r.body.uuid, secret: r.body.client_secret, name, nickname },
    close: () => peer.stop(),
  };
}
