// Accounts tables (versions 100-199). Timestamps are RFC 3339 strings; secrets are stored only
// as scrypt hashes (passwords) or SHA-256 digests (API, verification and recovery tokens).
import type { Migration } from "../../database/migrate.js";

export const accountsMigrations: Migration[] = [
  {
    version: 100,
    name: "accounts: tenants, users, passwords, e-mails, tokens, roles",
    up: `
      CREATE TABLE tenants (uuid TEXT PRIMARY KEY, name TEXT NOT NULL, created_at TEXT NOT NULL);
      CREATE TABLE users (
        uuid TEXT PRIMARY KEY,
        tenant_uuid TEXT NOT NULL REFERENCES tenants(uuid),
        name TEXT NOT NULL UNIQUE COLLATE NOCASE,
        nickname TEXT NOT NULL DEFAULT '',
        description TEXT NOT NULL DEFAULT '',
        disabled INTEGER NOT NULL DEFAULT 0,
        last_sign_in_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE user_passwords (
        user_uuid TEXT PRIMARY KEY REFERENCES users(uuid) ON DELETE CASCADE,
        hash TEXT NOT NULL,
        attempt_count INTEGER NOT NULL DEFAULT 0,
        last_attempt_at TEXT,
        is_temporary INTEGER NOT NULL DEFAULT 0,
        expired_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE user_emails (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        user_uuid TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
        address TEXT NOT NULL UNIQUE COLLATE NOCASE,
        verified INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX user_emails_user ON user_emails(user_uuid);
      CREATE TABLE email_verifications (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        email_id INTEGER NOT NULL REFERENCES user_emails(id) ON DELETE CASCADE,
        token_digest TEXT NOT NULL UNIQUE,
        expired_at TEXT NOT NULL,
        used_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE TABLE password_recoveries (
        token_digest TEXT PRIMARY KEY,
        user_uuid TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
        expired_at TEXT NOT NULL,
        used_at TEXT,
        created_at TEXT NOT NULL
      );
      CREATE TABLE api_tokens (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        user_uuid TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
        name TEXT NOT NULL,
        digest TEXT NOT NULL UNIQUE,
        last_used_at TEXT,
        expired_at TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        UNIQUE (user_uuid, name)
      );
      CREATE TABLE user_roles (
        user_uuid TEXT NOT NULL REFERENCES users(uuid) ON DELETE CASCADE,
        role_uuid TEXT NOT NULL,
        created_at TEXT NOT NULL,
        PRIMARY KEY (user_uuid, role_uuid)
      );
      CREATE INDEX user_roles_role ON user_roles(role_uuid);
      CREATE TABLE catalogue_entries (
        uuid TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        digest TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
    `,
  },
];
