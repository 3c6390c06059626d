// Opens the database a cloud peer's settings name: embedded SQLite in the data directory, or PostgreSQL.
import path from "node:path";
import { SqliteDb, type Db, type Durability } from "./db.js";
import { PgDb } from "./pg-db.js";

export const isPostgresUrl = (url: string) => /^postgres(ql)?:\/\//.test(url);

export function openDatabase(config: { database: string; dataDir: string; durability: Durability }): Promise<Db> {
  if (isPostgresUrl(config.database)) return PgDb.open(config.database);
  return SqliteDb.open(path.join(config.dataDir, "cloud.db"), { durability: config.durability });
}
