// Tables of the OAuth 2.0 authorization server (migration versions 200-299).
import type { Migration } from "../../storage/migrate.js";

export const oauthMigrations: Migration[] = [
  {
    version: 200,
    name: "oauth signing keys",
    up: `CREATE TABLE oauth_signing_keys (
      kid TEXT PRIMARY KEY,
      alg TEXT NOT NULL,
      private_jwk TEXT NOT NULL,
      public_jwk TEXT NOT NULL,
      created_at TEXT NOT NULL,
      -- set when a newer key takes over; the key stays published until retire_after
      superseded_at TEXT,
      retire_after TEXT
    )`,
  },
  {
    version: 201,
    name: "oauth clients and secrets",
    up: `CREATE TABLE oauth_clients (
      client_id TEXT PRIMARY KEY,
      name TEXT NOT NULL,
      grant_types TEXT NOT NULL,
      token_endpoint_auth_method TEXT NOT NULL,
      redirect_uris TEXT NOT NULL,
      response_types TEXT NOT NULL,
      scopes TEXT NOT NULL,
      audiences TEXT NOT NULL,
      tls_client_auth_subject_dn TEXT NOT NULL DEFAULT '',
      user_uuid TEXT,
      created_at TEXT NOT NULL,
      updated_at TEXT NOT NULL
    );
    CREATE INDEX oauth_clients_user ON oauth_clients(user_uuid);
    CREATE INDEX oauth_clients_name ON oauth_clients(name);
    CREATE TABLE oauth_client_secrets (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      client_id TEXT NOT NULL REFERENCES oauth_clients(client_id) ON DELETE CASCADE,
      name TEXT NOT NULL,
      digest TEXT NOT NULL,
      last_used_at TEXT,
      created_at TEXT NOT NULL
    );
    CREATE INDEX oauth_client_secrets_client ON oauth_client_secrets(client_id);`,
  },
  {
    version: 202,
    name: "oauth grants: codes, refresh tokens, revoked access tokens, sessions",
    up: `CREATE TABLE oauth_codes (
      digest TEXT PRIMARY KEY,
      client_id TEXT NOT NULL,
      redirect_uri TEXT NOT NULL,
      code_challenge TEXT,
      user_uuid TEXT NOT NULL,
      family_id TEXT NOT NULL,
      expires_at INTEGER NOT NULL,
      used_at INTEGER
    );
    CREATE TABLE oauth_refresh_tokens (
      digest TEXT PRIMARY KEY,
      family_id TEXT NOT NULL,
      client_id TEXT NOT NULL,
      subject_kind TEXT NOT NULL,
      subject_uuid TEXT NOT NULL,
      scope TEXT NOT NULL,
      restricted TEXT,
      access_jti TEXT NOT NULL,
      access_expires_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      used_at INTEGER,
      revoked_at INTEGER
    );
    CREATE INDEX oauth_refresh_tokens_family ON oauth_refresh_tokens(family_id);
    CREATE TABLE oauth_revoked_jtis (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
      jti TEXT NOT NULL UNIQUE,
      expires_at INTEGER NOT NULL
    );
    CREATE TABLE oauth_sessions (
      digest TEXT PRIMARY KEY,
      user_uuid TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL
    );`,
  },
  {
    version: 203,
    name: "oauth revoked grant families",
    // A marker per revoked family, so that a token issued concurrently with a replay is caught too.
    up: "CREATE TABLE oauth_revoked_families (family_id TEXT PRIMARY KEY, revoked_at INTEGER NOT NULL)",
  },
];
