// Vitest global setup of the `postgres` project: one PostgreSQL server for the whole run (a start costs
// seconds; a database per peer costs tens of milliseconds). The workers find it through the environment.
import { startPostgres } from "./postgres.js";
import { ADMIN_URL_ENV } from "./test-database.js";

export default async function setup(): Promise<(() => void) | undefined> {
  if (process.env[ADMIN_URL_ENV]) return undefined;
  const server = await startPostgres();
  process.env[ADMIN_URL_ENV] = server.urlOf("postgres");
  return () => server.stop();
}
