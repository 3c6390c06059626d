// The test TCP balancer: the benches' (bench/infra/tcp-balancer.ts), shared.
export * from "../../bench/infra/tcp-balancer.js";
