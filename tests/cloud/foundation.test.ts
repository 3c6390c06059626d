import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "./harness.js";

describe("cloud peer foundation", () => {
  let peer: TestPeer;
  beforeAll(async () => {
    peer = await startTestPeer();
  });
  afterAll(async () => {
    await peer.stop();
  });

  it("serves an OpenAPI 3.1 document", async () => {
    const res = await peer.api("/openapi.json");
    expect(res.status).toBe(200);
    const doc: any = await res.json();
    expect(doc.openapi).toBe("3.1.0");
    expect(doc.components.securitySchemes.IntdashToken).toEqual({ type: "apiKey", in: "header", name: "X-Intdash-Token" });
  });

  it("answers unknown paths with a 404 in the error shape", async () => {
    const res = await peer.api("/no/such/thing");
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toBe("application/json; charset=utf-8");
    const body: any = await res.json();
    expect(body.type).toBe("not_found");
    expect(typeof body.title).toBe("string");
  });

  it("answers a known path with the wrong method with 405 and Allow", async () => {
    const res = await peer.api("/openapi.json", { method: "DELETE" });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toContain("GET");
    expect(((await res.json()) as any).type).toBe("method_not_allowed");
  });
});
