// Model-based tests of the filter and deferred-upload machines.
import { createActor, type AnyMachineSnapshot } from "xstate";
import { describe, expect, it } from "vitest";
import { sessionKey, type Session } from "../../machines/vocabulary.js";
import { deferredUploadMachine, reportDeferred, type DeferredSnapshot } from "../../machines/deferred-upload.js";
import { filterMachine } from "../../machines/filter.js";
import { openerActor } from "../../machines/link.js";
import type { DeferredUploadSettings, Filter } from "../../runtime/settings/schemas.js";
import { driver, fakeOpener, type Ev } from "../support/agent-fakes.js";
import { walkEveryTransition, type Sut } from "./model.js";

const sampling: Filter = {
  id: "f",
  enabled: true,
  type: "sampling",
  target: { type: "always" },
  change_to: { type: "sampling", interval_ms: 10 },
};
const slower: Filter = { ...sampling, change_to: { type: "sampling", interval_ms: 50 } };
const rename: Filter = { ...sampling, type: "rename", change_to: { type: "rename", add_prefix: "x/" } };

describe("filter machine", () => {
  const events: Ev[] = [
    { type: "SETTINGS", settings: sampling },
    { type: "SETTINGS", settings: slower },
    { type: "SETTINGS", settings: { ...sampling, enabled: false } },
    { type: "SETTINGS", settings: rename },
    { type: "REMOVE" },
  ];
  const serialize = (s: AnyMachineSnapshot) => {
    const c = s.context as { settings: Filter };
    return JSON.stringify({ v: s.value, st: s.status, settings: c.settings });
  };

  it("walks every state and transition", async () => {
    const input = { settings: sampling };
    const result = await walkEveryTransition<Ev>({
      machine: filterMachine,
      input,
      events,
      serialize,
      sut: (): Sut<Ev> => {
        const actor = createActor(filterMachine, { input }).start();
        return { send: (e) => actor.send(e as never), snapshot: () => actor.getSnapshot(), stop: () => actor.stop() };
      },
    });
    expect(result.transitions).toBeGreaterThan(20);
  });

  it("keeps per-data-id sampling memory across updates, and drops it when the kind changes", () => {
    const actor = createActor(filterMachine, { input: { settings: sampling } }).start();
    const memory = actor.getSnapshot().context.memory;
    memory.lastKept.set("float64:1/speed", 1_000);
    actor.send({ type: "SETTINGS", settings: slower });
    actor.send({ type: "SETTINGS", settings: { ...slower, enabled: false } });
    actor.send({ type: "SETTINGS", settings: slower });
    expect(actor.getSnapshot().context.memory).toBe(memory);
    expect(actor.getSnapshot().context.memory.lastKept.get("float64:1/speed")).toBe(1_000);
    expect(actor.getSnapshot().context.revision).toBe(3);
    actor.send({ type: "SETTINGS", settings: rename });
    expect(actor.getSnapshot().context.memory.lastKept.size).toBe(0);
    actor.send({ type: "REMOVE" });
    expect(actor.getSnapshot().status).toBe("done");
  });
});

describe("deferred-upload machine", () => {
  const settings: DeferredUploadSettings = {
    priority: "same_as_realtime",
    limit_data_storage: true,
    data_storage_capacity: 100,
  };
  const transport = { protocol: "websocket" as const, send_queue_size: 1 };
  const session: Session = {
    connection: { server_url: "https://a", project_uuid: "p", edge_uuid: "e", client_secret: "s" },
    transport,
    accessToken: "t",
  };
  const sessionB: Session = { ...session, connection: { ...session.connection, server_url: "https://b" } };
  const events: Ev[] = [
    { type: "SETTINGS", settings },
    { type: "SETTINGS", settings: { ...settings, priority: "lower_than_realtime" } },
    { type: "SETTINGS", settings: { ...settings, data_storage_capacity: 5 } },
    { type: "SESSION", session, reason: "" },
    { type: "SESSION", session: sessionB, reason: "" },
    { type: "SESSION", session: undefined, reason: "authentication failed" },
    { type: "PENDING", bytes: 4096 },
    { type: "PENDING", bytes: 0 },
    { type: "TICK" },
    { type: "LINK.CLOSED", reason: "all uploaded" },
    { type: "LINK.FAILED", reason: "HTTP 503" },
    { type: "DATA", bytes: 100 },
  ];
  const serialize = (s: AnyMachineSnapshot) => {
    const c = s.context as {
      settings: DeferredUploadSettings;
      session?: Session;
      pending: number;
      traffic: { bytes: number; idleTicks: number };
      retryIn: number;
    };
    return JSON.stringify({
      v: s.value,
      prio: c.settings.priority,
      s: sessionKey(c.session),
      pending: c.pending > 0,
      ...(s.matches("uploading") ? { idle: c.traffic.idleTicks, bytes: c.traffic.bytes > 0 } : {}),
      ...(s.matches("failed") ? { retry: c.retryIn } : {}),
    });
  };
  const CODES: Array<[string | object, string]> = [
    ["idle", "none"],
    ["waiting", "disconnected"],
    [{ uploading: "quiet" }, "quiet"],
    [{ uploading: "active" }, "connected"],
    ["failed", "error"],
  ];

  it("walks every state and transition; reports the mapped code in each", async () => {
    const input = { settings, session: undefined, sessionReason: "authenticating" };
    const result = await walkEveryTransition<Ev>({
      machine: deferredUploadMachine.provide({ actors: { uploader: openerActor(() => ({ close() {} })) } }),
      input,
      events,
      serialize,
      sut: (): Sut<Ev> => {
        const fake = fakeOpener<unknown>();
        const actor = createActor(
          deferredUploadMachine.provide({ actors: { uploader: openerActor(fake.open as never) } }),
          { input },
        ).start();
        return { send: driver(actor, fake), snapshot: () => actor.getSnapshot(), stop: () => actor.stop() };
      },
      check: (_m, real) => {
        const r = reportDeferred(real as DeferredSnapshot);
        for (const [value, code] of CODES) if (real.matches(value as never)) expect(r.code).toBe(code);
      },
    });
    expect(result.transitions).toBeGreaterThan(100);
  });
});
