// A real PostgreSQL server for tests: the benches' starter (bench/infra/postgres.ts), shared.
export * from "../../bench/infra/postgres.js";
