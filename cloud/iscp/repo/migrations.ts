// iSCP broker state shared by the peers (versions 450-499 of the iSCP/measurements range): what an upstream
// needs to be resumed on another peer than the one it was opened on.
import type { Migration } from "../../database/migrate.js";

export const iscpMigrations: Migration[] = [
  {
    version: 450,
    name: "resumable upstreams",
    // seen_at_ms: when the holding peer last said it still holds the stream (open, takeover, its heartbeat).
    up: `
CREATE TABLE iscp_upstreams (
  stream_id TEXT PRIMARY KEY,
  project_uuid TEXT NOT NULL,
  node_id TEXT NOT NULL,
  subject_kind TEXT NOT NULL,
  subject_uuid TEXT NOT NULL,
  session_id TEXT NOT NULL,
  qos INTEGER NOT NULL,
  persist INTEGER NOT NULL,
  ack_interval_ms INTEGER NOT NULL,
  expiry_ms INTEGER NOT NULL,
  stream_alias INTEGER NOT NULL,
  peer_id TEXT NOT NULL,
  seen_at_ms INTEGER NOT NULL
);
CREATE INDEX iscp_upstreams_peer ON iscp_upstreams (peer_id);

CREATE TABLE iscp_upstream_aliases (
  stream_id TEXT NOT NULL REFERENCES iscp_upstreams (stream_id) ON DELETE CASCADE,
  alias INTEGER NOT NULL,
  name TEXT NOT NULL,
  type TEXT NOT NULL,
  PRIMARY KEY (stream_id, alias)
) WITHOUT ROWID;
`,
  },
];
