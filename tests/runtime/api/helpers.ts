// Shared by the command API's validation tests: an agent with one upstream `u` and one downstream connector `dd`
// to refer to, and the check of a problem body ({title, status, detail, instance} and nothing else).
import { afterAll, beforeAll, expect } from "vitest";
import type { ApiResponse } from "../../../runtime/cli/client.js";
import { startTestAgent, type TestAgent } from "../../support/agent.js";

/** Starts the agent before the calling file's tests and closes it after them; its `api` and `dir` are the agent's. */
export function validationAgent(): Pick<TestAgent, "api" | "dir"> {
  let t: TestAgent | undefined;
  beforeAll(async () => {
    t = await startTestAgent();
    await t.api.post("/upstreams", { id: "u" });
    await t.api.post("/device-connectors/downstream", { id: "dd", format: "iscp-v2-compat" });
  });
  afterAll(async () => {
    await t?.close();
  });
  return {
    get api() {
      return t!.api;
    },
    get dir() {
      return t!.dir;
    },
  };
}

export function expectProblem(r: ApiResponse, status: number, detail: string | RegExp, instance?: string) {
  expect(r.status).toBe(status);
  const body = r.body as Record<string, unknown>;
  expect(Object.keys(body).sort()).toEqual(["detail", "instance", "status", "title"]);
  expect(body.status).toBe(status);
  if (typeof detail === "string") expect(body.detail).toContain(detail);
  else expect(body.detail).toMatch(detail);
  if (instance) expect(body.instance).toBe(instance);
  if (status === 404) expect(body.title).toBe("Resource is not found");
}

/** A new id on each call. */
export function freshIds(prefix = "x"): () => string {
  let n = 0;
  return () => `${prefix}${++n}`;
}
