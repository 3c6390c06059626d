// A real nats-server for tests: the benches' starter (bench/infra/nats.ts), shared.
export * from "../../bench/infra/nats.js";
