// Model-based tests of the upstream and downstream machines: every reachable state and every event
// from it, replayed on a real actor whose link is a fake opener the test drives.
import { createActor, type AnyMachineSnapshot } from "xstate";
import { describe, expect, it } from "vitest";
import { sessionKey, type Session } from "../../machines/vocabulary.js";
import { openerActor } from "../../machines/link.js";
import { downstreamMachine, reportStream, upstreamMachine, type StreamSnapshot } from "../../machines/stream.js";
import type { DownstreamSettings, UpstreamSettings } from "../../runtime/settings/schemas.js";
import { driver, fakeOpener, type Ev } from "../support/agent-fakes.js";
import { walkEveryTransition, type Sut } from "./model.js";

const transport = { protocol: "websocket" as const, send_queue_size: 4096 };
const conn = (server: string) => ({ server_url: server, project_uuid: "p", edge_uuid: "e", client_secret: "s" });
const sessionA: Session = { connection: conn("https://a"), transport, accessToken: "t1" };
const sessionA2: Session = { ...sessionA, accessToken: "t2" };
const sessionB: Session = { connection: conn("https://b"), transport, accessToken: "t3" };

const up: UpstreamSettings = {
  id: "u",
  enabled: true,
  recover: true,
  persist: true,
  qos: "unreliable",
  flush_policy: "interval",
  flush_interval: 5,
};
const down: DownstreamSettings = { id: "d", enabled: true, dest_ids: ["x"], qos: "unreliable", filters: [] };

const serialize = (s: AnyMachineSnapshot) => {
  const c = s.context as {
    settings: { enabled: boolean; qos: string; dest_ids?: string[] };
    session?: Session;
    traffic: { bytes: number; idleTicks: number };
    retryIn: number;
    lost: boolean;
  };
  const inOpen = s.matches({ enabled: { linked: "open" } });
  return JSON.stringify({
    v: s.value,
    en: c.settings.enabled,
    qos: c.settings.qos,
    dest: c.settings.dest_ids,
    s: sessionKey(c.session),
    ...(inOpen ? { idle: c.traffic.idleTicks, bytes: c.traffic.bytes > 0 } : {}),
    ...(s.matches({ enabled: "retrying" }) ? { retry: c.retryIn, lost: c.lost } : {}),
  });
};

const EXPECTED_CODE: Array<[object | string, string]> = [
  ["disabled", "none"],
  [{ enabled: "waiting" }, "disconnected"],
  [{ enabled: { linked: "connecting" } }, "disconnected"],
  [{ enabled: { linked: "reconnecting" } }, "disconnected"],
  [{ enabled: { linked: { open: "quiet" } } }, "quiet"],
  [{ enabled: { linked: { open: "active" } } }, "connected"],
];

describe.each([
  ["upstream", upstreamMachine, up, { ...up, qos: "partial" as const }],
  ["downstream", downstreamMachine, down, { ...down, qos: "partial" as const, dest_ids: ["y"] }],
] as const)("%s machine", (name, machine, base, changed) => {
  const disabled = { ...base, enabled: false };
  const events: Ev[] = [
    { type: "SETTINGS", settings: base },
    { type: "SETTINGS", settings: disabled },
    { type: "SETTINGS", settings: changed },
    { type: "SESSION", session: sessionA, reason: "" },
    { type: "SESSION", session: sessionA2, reason: "" },
    { type: "SESSION", session: sessionB, reason: "" },
    { type: "SESSION", session: undefined, reason: "authentication failed: 401" },
    { type: "TICK" },
    { type: "LINK.OPENED" },
    { type: "LINK.CLOSED", reason: "connection lost" },
    { type: "LINK.FAILED", reason: "refused" },
    { type: "LINK.INTERRUPTED", reason: "transport lost" },
    { type: "DATA", bytes: 125 },
  ];
  const input = { settings: base, session: undefined, sessionReason: "authenticating with the server" };
  const inert = openerActor(() => ({ close() {} }));

  it("walks every state and transition; reports the mapped code in each", async () => {
    const result = await walkEveryTransition<Ev>({
      machine: machine.provide({ actors: { link: inert } } as never),
      input,
      events,
      serialize,
      sut: (): Sut<Ev> => {
        const fake = fakeOpener<unknown>();
        const actor = createActor(machine.provide({ actors: { link: openerActor(fake.open) } } as never), {
          input,
        } as never).start();
        return {
          send: driver(actor, fake),
          snapshot: () => actor.getSnapshot() as AnyMachineSnapshot,
          stop: () => actor.stop(),
        };
      },
      check: (_model, real) => {
        const report = reportStream(real as StreamSnapshot);
        for (const [value, code] of EXPECTED_CODE) if (real.matches(value as never)) expect(report.code).toBe(code);
        if (real.matches({ enabled: "retrying" }))
          expect(report.code).toBe((real.context as { lost: boolean }).lost ? "disconnected" : "error");
      },
    });
    expect(result.transitions).toBeGreaterThan(100);
  });

  it("opens with the settings and session, measures bitrate, and closes the link when disabled", async () => {
    const fake = fakeOpener<{ direction: string; settings: unknown; session: Session }>();
    const actor = createActor(machine.provide({ actors: { link: openerActor(fake.open) } } as never), {
      input: { settings: base, session: sessionA },
    } as never).start();
    expect(fake.calls).toHaveLength(1);
    expect(fake.last()!.params).toMatchObject({ direction: name, settings: base, session: sessionA });
    fake.last()!.cb.opened();
    fake.last()!.cb.data(1000);
    actor.send({ type: "TICK" } as never);
    expect(reportStream(actor.getSnapshot() as StreamSnapshot)).toEqual({
      code: "connected",
      error: "",
      bitrate: 8000,
    });
    for (let i = 0; i < 5; i++) actor.send({ type: "TICK" } as never);
    expect(reportStream(actor.getSnapshot() as StreamSnapshot).code).toBe("quiet");
    actor.send({ type: "SESSION", session: sessionA2, reason: "" } as never);
    expect(fake.calls).toHaveLength(1); // a refreshed token does not reconnect
    actor.send({ type: "SETTINGS", settings: disabled } as never);
    await new Promise((r) => setImmediate(r));
    expect(fake.last()!.closed).toBe(true);
    expect(reportStream(actor.getSnapshot() as StreamSnapshot).code).toBe("none");
    actor.stop();
  });
});

describe("stream retry backoff", () => {
  it("doubles up to 30 ticks, with jitter between 50 % and 100 % that differs between edges", async () => {
    const { backoffTicks, MAX_BACKOFF_TICKS } = await import("../../machines/vocabulary.js");
    const ceilings = [1, 2, 4, 8, 16, 30, 30, 30];
    for (const [i, c] of ceilings.entries()) {
      const t = backoffTicks(i + 1, "edge-a/up");
      expect(t).toBeGreaterThanOrEqual(Math.max(1, Math.ceil(c / 2)));
      expect(t).toBeLessThanOrEqual(c);
    }
    expect(backoffTicks(1000, "edge-a/up")).toBeLessThanOrEqual(MAX_BACKOFF_TICKS);
    const spread = new Set(Array.from({ length: 50 }, (_, i) => backoffTicks(6, `edge-${i}/up`)));
    expect(spread.size).toBeGreaterThan(5);
    expect(backoffTicks(6, "edge-a/up")).toBe(backoffTicks(6, "edge-a/up"));
  });
});
