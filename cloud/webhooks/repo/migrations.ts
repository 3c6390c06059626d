// Webhook storage (versions 500-599). A hook's secret is kept as given: it keys the HMAC of every
// delivery, so it must be readable; it is shown only when the server generated it, at creation.
import type { Migration } from "../../database/migrate.js";

export const webhookMigrations: Migration[] = [
  {
    version: 500,
    name: "webhooks and their deliveries",
    up: `
CREATE TABLE webhook_hooks (
  uuid TEXT PRIMARY KEY,
  project_uuid TEXT NOT NULL,
  url TEXT NOT NULL,
  secret TEXT NOT NULL,
  events TEXT NOT NULL DEFAULT '{}',
  enabled INTEGER NOT NULL DEFAULT 1,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX webhook_hooks_project ON webhook_hooks (project_uuid);

CREATE TABLE webhook_deliveries (
  uuid TEXT PRIMARY KEY,
  hook_uuid TEXT NOT NULL REFERENCES webhook_hooks (uuid) ON DELETE CASCADE,
  project_uuid TEXT NOT NULL,
  redelivered_by TEXT,
  status TEXT NOT NULL,
  reason TEXT NOT NULL DEFAULT '',
  is_test INTEGER NOT NULL DEFAULT 0,
  attempts INTEGER NOT NULL DEFAULT 0,
  request_headers TEXT,
  request_body TEXT NOT NULL,
  response_status INTEGER,
  response_headers TEXT,
  response_body TEXT,
  finished_at TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX webhook_deliveries_hook ON webhook_deliveries (hook_uuid, created_at);
CREATE INDEX webhook_deliveries_project ON webhook_deliveries (project_uuid, created_at);
`,
  },
];
