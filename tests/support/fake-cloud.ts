// A stand-in for the cloud peer's auth endpoints (token with client_credentials, GET edges/me), served
// over real HTTP, recording every request it gets, so a test can check what the agent asked and in which order.
import http from "node:http";
import type { AddressInfo } from "node:net";

export const EDGE = "0e4ed8f2-5b7a-4c65-9d8e-2f7f0b2d9a11";
export const SECRET = "correct-horse";

/** A stand-in for the cloud peer's auth endpoints. */
export function fakeCloud(): Promise<{ url: string; server: http.Server; requests: string[] }> {
  const requests: string[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      requests.push(`${req.method} ${req.url}`);
      const json = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body));
      };
      if (req.method === "POST" && req.url === "/api/auth/oauth2/token") {
        const form = new URLSearchParams(Buffer.concat(chunks).toString());
        if (req.headers["content-type"] !== "application/x-www-form-urlencoded")
          return json(400, { error: "invalid_request" });
        if (form.get("grant_type") !== "client_credentials") return json(400, { error: "unsupported_grant_type" });
        if (form.get("client_id") !== EDGE || form.get("client_secret") !== SECRET)
          return json(401, { error: "invalid_client", error_description: "client authentication failed" });
        return json(200, { access_token: "tok-1", token_type: "Bearer", expires_in: 3600 });
      }
      if (req.method === "GET" && req.url === "/api/auth/edges/me") {
        if (req.headers.authorization !== "Bearer tok-1")
          return json(401, { type: "unauthorized", title: "authentication required" });
        return json(200, { uuid: EDGE, name: "edge-name-1", nickname: "Edge One", type: "device" });
      }
      json(404, { type: "not_found", title: "resource not found" });
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server, requests }),
    ),
  );
}
