// Organisation tables (versions 300-399): edges and their client secrets, groups (a tree through
// parent_uuid), projects, members of both with role UUIDs and an owner flag, and project edges.
// User UUIDs are not foreign keys: users belong to the accounts area, which tells us of deletions.
import type { Migration } from "../../database/migrate.js";

export const orgMigrations: Migration[] = [
  {
    version: 300,
    name: "org: edges and edge client secrets",
    up: `
      CREATE TABLE edges (
        uuid TEXT PRIMARY KEY,
        name TEXT NOT NULL UNIQUE,
        nickname TEXT NOT NULL DEFAULT '',
        description TEXT NOT NULL DEFAULT '',
        owner_uuid TEXT,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE INDEX edges_owner ON edges(owner_uuid);
      CREATE TABLE edge_secrets (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        edge_uuid TEXT NOT NULL REFERENCES edges(uuid) ON DELETE CASCADE,
        name TEXT NOT NULL,
        digest TEXT NOT NULL,
        hint TEXT NOT NULL,
        last_used_at TEXT,
        created_at TEXT NOT NULL
      );
      CREATE INDEX edge_secrets_edge ON edge_secrets(edge_uuid);
    `,
  },
  {
    version: 301,
    name: "org: groups, projects, members, project edges",
    up: `
      CREATE TABLE org_groups (
        uuid TEXT PRIMARY KEY,
        parent_uuid TEXT REFERENCES org_groups(uuid) ON DELETE RESTRICT,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE UNIQUE INDEX org_groups_name ON org_groups(COALESCE(parent_uuid, ''), name);
      CREATE TABLE projects (
        uuid TEXT PRIMARY KEY,
        group_uuid TEXT NOT NULL REFERENCES org_groups(uuid) ON DELETE RESTRICT,
        name TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL
      );
      CREATE UNIQUE INDEX projects_name ON projects(group_uuid, name);
      CREATE INDEX projects_created ON projects(created_at);
      CREATE TABLE group_members (
        group_uuid TEXT NOT NULL REFERENCES org_groups(uuid) ON DELETE CASCADE,
        user_uuid TEXT NOT NULL,
        role_uuids TEXT NOT NULL,
        is_owner INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (group_uuid, user_uuid)
      );
      CREATE INDEX group_members_user ON group_members(user_uuid);
      CREATE TABLE project_members (
        project_uuid TEXT NOT NULL REFERENCES projects(uuid) ON DELETE CASCADE,
        user_uuid TEXT NOT NULL,
        role_uuids TEXT NOT NULL,
        is_owner INTEGER NOT NULL DEFAULT 0,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (project_uuid, user_uuid)
      );
      CREATE INDEX project_members_user ON project_members(user_uuid);
      CREATE TABLE project_edges (
        project_uuid TEXT NOT NULL REFERENCES projects(uuid) ON DELETE CASCADE,
        edge_uuid TEXT NOT NULL REFERENCES edges(uuid) ON DELETE CASCADE,
        nickname TEXT NOT NULL,
        created_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        PRIMARY KEY (project_uuid, edge_uuid)
      );
      CREATE UNIQUE INDEX project_edges_nickname ON project_edges(project_uuid, nickname);
      CREATE INDEX project_edges_edge ON project_edges(edge_uuid);
    `,
  },
];
