// Model-based test of the connection machine: token requests are a fake promise actor the test
// resolves or rejects; the session handed to streams follows the machine's state.
import { createActor, type AnyMachineSnapshot } from "xstate";
import { describe, expect, it } from "vitest";
import {
  connectionMachine,
  reportConnection,
  sessionOf,
  tokenActor,
  TokenRejectedError,
  type ConnectionSnapshot,
  type Token,
} from "../../machines/connection.js";
import type { ConnectionSettings } from "../../runtime/settings/schemas.js";
import { fakeTokens, type Ev } from "../support/agent-fakes.js";
import { walkEveryTransition, type Sut } from "./model.js";

const transport = { protocol: "websocket" as const, send_queue_size: 4096 };
const A: ConnectionSettings = { server_url: "https://a", project_uuid: "p", edge_uuid: "e", client_secret: "s" };
const B: ConnectionSettings = { ...A, server_url: "https://b" };
const noSecret: ConnectionSettings = { ...A, client_secret: "" };
const token: Token = { accessToken: "tok", expiresIn: 3 };

const serialize = (s: AnyMachineSnapshot) => {
  const c = s.context as {
    connection: ConnectionSettings;
    token?: Token;
    refreshIn: number;
    refreshFailures: number;
    retryIn: number;
  };
  return JSON.stringify({
    v: s.value,
    url: c.connection.server_url,
    secret: c.connection.client_secret !== "",
    token: c.token !== undefined,
    ...(s.matches("authenticated") ? { refresh: c.refreshIn, refreshFailed: c.refreshFailures > 0 } : {}),
    ...(s.matches("failed") ? { retry: c.retryIn } : {}),
  });
};

const events: Ev[] = [
  { type: "SETTINGS", connection: A, transport },
  { type: "SETTINGS", connection: B, transport },
  { type: "SETTINGS", connection: noSecret, transport },
  { type: "SETTINGS", connection: A, transport: { ...transport, protocol: "quic" } },
  { type: "TICK" },
  { type: "xstate.done.actor.fetchToken", output: token },
  { type: "xstate.error.actor.fetchToken", error: new TokenRejectedError("token request rejected (401)") },
  { type: "xstate.error.actor.fetchToken", error: new Error("cannot reach https://a: other side closed") },
];

describe("connection machine", () => {
  it("walks every state and transition; the session exists exactly while a token is held", async () => {
    const input = { connection: A, transport };
    const result = await walkEveryTransition<Ev>({
      machine: connectionMachine.provide({
        actors: { fetchToken: tokenActor(() => new Promise<Token>(() => undefined)) },
      }),
      input,
      events,
      serialize,
      sut: (): Sut<Ev> => {
        const tokens = fakeTokens();
        const actor = createActor(connectionMachine.provide({ actors: { fetchToken: tokens.actor } }), {
          input,
        }).start();
        return {
          send: (e) => {
            const p = tokens.pending[tokens.pending.length - 1];
            if (e.type === "xstate.done.actor.fetchToken") p?.resolve(e.output as Token);
            else if (e.type === "xstate.error.actor.fetchToken") p?.reject(e.error as Error);
            else actor.send(e as never);
          },
          snapshot: () => actor.getSnapshot(),
          stop: () => actor.stop(),
        };
      },
      check: (_m, real) => {
        const s = real as ConnectionSnapshot;
        const { session } = sessionOf(s);
        expect(session !== undefined).toBe(s.matches("authenticated") || s.matches("refreshing"));
        const code = reportConnection(s).code;
        if (s.matches("unconfigured")) expect(code).toBe("none");
        if (s.matches("failed")) expect(code).toBe("error");
        if (s.matches("authenticating")) expect(code).toBe("disconnected");
      },
    });
    expect(result.transitions).toBeGreaterThan(40);
  });

  it("requests tokens with the settings and refreshes before expiry", async () => {
    const tokens = fakeTokens();
    const actor = createActor(connectionMachine.provide({ actors: { fetchToken: tokens.actor } }), {
      input: { connection: A, transport },
    }).start();
    expect(tokens.pending).toHaveLength(1);
    expect(tokens.pending[0]!.input).toEqual(A);
    tokens.pending[0]!.resolve({ accessToken: "t1", expiresIn: 10 });
    await new Promise((r) => setImmediate(r));
    expect(sessionOf(actor.getSnapshot()).session?.accessToken).toBe("t1");
    for (let i = 0; i < 8; i++) actor.send({ type: "TICK" });
    expect(actor.getSnapshot().value).toBe("refreshing");
    expect(sessionOf(actor.getSnapshot()).session?.accessToken).toBe("t1"); // still usable while refreshing
    tokens.pending[1]!.resolve({ accessToken: "t2", expiresIn: 10 });
    await new Promise((r) => setImmediate(r));
    expect(sessionOf(actor.getSnapshot()).session?.accessToken).toBe("t2");
    actor.stop();
  });

  it("keeps the token when a refresh gets no answer, tries again at the next tick, and ends on a refusal", async () => {
    const tokens = fakeTokens();
    const actor = createActor(connectionMachine.provide({ actors: { fetchToken: tokens.actor } }), {
      input: { connection: A, transport },
    }).start();
    const settle = () => new Promise((r) => setImmediate(r));
    tokens.pending[0]!.resolve({ accessToken: "t1", expiresIn: 4 });
    await settle();
    for (let i = 0; i < 3; i++) actor.send({ type: "TICK" });
    expect(tokens.pending).toHaveLength(2);
    tokens.pending[1]!.reject(new Error("cannot reach https://a/api/auth/oauth2/token: other side closed"));
    await settle();
    // The streams keep their session: nothing reconnects, their reconnects still have a token.
    expect(sessionOf(actor.getSnapshot()).session?.accessToken).toBe("t1");
    expect(reportConnection(actor.getSnapshot())).toMatchObject({ code: "connected", error: /token refresh failed/ });
    actor.send({ type: "TICK" });
    expect(tokens.pending).toHaveLength(3);
    tokens.pending[2]!.reject(new Error("cannot reach https://a/api/auth/oauth2/token: connection refused"));
    await settle();
    for (let i = 0; i < 4; i++) actor.send({ type: "TICK" });
    expect(tokens.pending).toHaveLength(3); // later retries wait RETRY_TICKS
    actor.send({ type: "TICK" });
    tokens.pending[3]!.resolve({ accessToken: "t2", expiresIn: 4 });
    await settle();
    expect(sessionOf(actor.getSnapshot()).session?.accessToken).toBe("t2");
    expect(reportConnection(actor.getSnapshot())).toEqual({ code: "connected", error: "", bitrate: 0 });
    for (let i = 0; i < 3; i++) actor.send({ type: "TICK" });
    tokens.pending[4]!.reject(new TokenRejectedError("token request rejected (401): invalid_client"));
    await settle();
    expect(sessionOf(actor.getSnapshot()).session).toBeUndefined();
    expect(reportConnection(actor.getSnapshot()).code).toBe("error");
    actor.stop();
  });
});
