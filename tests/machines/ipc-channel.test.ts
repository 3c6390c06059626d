// Model-based tests of the device-connector IPC channel machines (both directions).
import { createActor, type AnyMachineSnapshot } from "xstate";
import { describe, expect, it } from "vitest";
import {
  downstreamIpcMachine,
  reportChannel,
  upstreamIpcMachine,
  type ChannelSnapshot,
} from "../../machines/ipc-channel.js";
import { openerActor } from "../../machines/link.js";
import type { DownstreamIpcSettings, UpstreamIpcSettings } from "../../runtime/settings/schemas.js";
import { driver, fakeOpener, type Ev } from "../support/agent-fakes.js";
import { walkEveryTransition, type Sut } from "./model.js";

const upIpc: UpstreamIpcSettings = {
  id: "c",
  enabled: true,
  data_name_prefix: "",
  format: "iscp-v2-compat",
  ipc: { type: "fifo", path: "/run/a.fifo" },
  dest_ids: ["u"],
};
const downIpc: DownstreamIpcSettings = {
  id: "c",
  enabled: true,
  data_name_prefix: "",
  format: "logger-msg",
  ipc: { type: "fifo", path: "/run/b.fifo" },
};

const serialize = (s: AnyMachineSnapshot) => {
  const c = s.context as {
    settings: { enabled: boolean; ipc: { path: string }; dest_ids?: string[] };
    traffic: { bytes: number; idleTicks: number };
    retryIn: number;
    error: string;
    problem: { text: string; severe: boolean };
  };
  return JSON.stringify({
    v: s.value,
    en: c.settings.enabled,
    path: c.settings.ipc.path,
    dest: c.settings.dest_ids,
    ...(s.matches({ running: "open" })
      ? { idle: c.traffic.idleTicks, bytes: c.traffic.bytes > 0, problem: c.problem }
      : {}),
    ...(s.matches("retrying") ? { retry: c.retryIn } : {}),
    ...(s.matches({ running: "waiting" }) ? { err: c.error } : {}),
  });
};

const CODES: Array<[object | string, string]> = [
  ["disabled", "none"],
  [{ running: "waiting" }, "disconnected"],
  [{ running: { open: "quiet" } }, "quiet"],
  [{ running: { open: "active" } }, "connected"],
  ["retrying", "error"],
  ["stopped", "error"],
];

describe.each([
  [
    "upstream",
    upstreamIpcMachine,
    upIpc,
    { ...upIpc, dest_ids: ["u", "deferred"] },
    { ...upIpc, ipc: { type: "fifo" as const, path: "/run/c.fifo" } },
  ],
  [
    "downstream",
    downstreamIpcMachine,
    downIpc,
    { ...downIpc },
    { ...downIpc, ipc: { type: "fifo" as const, path: "/run/d.fifo" } },
  ],
] as const)("%s IPC channel machine", (name, machine, base, routingOnly, moved) => {
  const events: Ev[] = [
    { type: "SETTINGS", settings: base },
    { type: "SETTINGS", settings: { ...base, enabled: false } },
    { type: "SETTINGS", settings: routingOnly },
    { type: "SETTINGS", settings: moved },
    { type: "TICK" },
    { type: "LINK.OPENED" },
    { type: "LINK.PROBLEM", text: "2 corrupt frame region(s) skipped (40 bytes)" },
    { type: "LINK.PROBLEM", text: "5 point(s) not accepted: disk full", severe: true },
    { type: "LINK.CLOSED", reason: "connector closed the FIFO" },
    { type: "LINK.FAILED", reason: "mkfifo failed" },
    { type: "LINK.FAILED", reason: "connector exited with code 1; restart policy gave up", permanent: true },
    { type: "DATA", bytes: 10 },
  ];
  const input = { settings: base };

  it("walks every state and transition; reports the mapped code in each", async () => {
    const result = await walkEveryTransition<Ev>({
      machine: machine.provide({ actors: { channel: openerActor(() => ({ close() {} })) } } as never),
      input,
      events,
      serialize,
      sut: (): Sut<Ev> => {
        const fake = fakeOpener<unknown>();
        const actor = createActor(machine.provide({ actors: { channel: openerActor(fake.open) } } as never), {
          input,
        } as never).start();
        return {
          send: driver(actor, fake),
          snapshot: () => actor.getSnapshot() as AnyMachineSnapshot,
          stop: () => actor.stop(),
        };
      },
      check: (_m, real) => {
        const r = reportChannel(real as ChannelSnapshot);
        const problem = (real.context as { problem: { text: string; severe: boolean } }).problem;
        const refusing = real.matches({ running: "open" } as never) && problem.severe;
        for (const [value, code] of CODES)
          if (real.matches(value as never)) expect(r.code).toBe(refusing ? "error" : code);
        if (real.matches({ running: "open" } as never)) expect(r.error).toBe(problem.text);
        if (real.matches({ running: "waiting" } as never) && problem.text) expect(r.error).toContain(problem.text);
      },
    });
    expect(result.transitions).toBeGreaterThan(50);
  });

  it("keeps the driver running across routing-only changes and restarts it when the FIFO moves", async () => {
    const fake = fakeOpener<{ direction: string; settings: { ipc: { path: string } } }>();
    const actor = createActor(machine.provide({ actors: { channel: openerActor(fake.open) } } as never), {
      input,
    } as never).start();
    expect(fake.last()!.params.direction).toBe(name);
    fake.last()!.cb.opened();
    actor.send({ type: "SETTINGS", settings: routingOnly } as never);
    expect(fake.calls).toHaveLength(1);
    actor.send({ type: "SETTINGS", settings: moved } as never);
    await new Promise((r) => setImmediate(r));
    expect(fake.calls).toHaveLength(2);
    expect(fake.calls[0]!.closed).toBe(true);
    expect(fake.last()!.params.settings.ipc.path).toBe(moved.ipc.path);
    fake.last()!.cb.failed("permission denied");
    expect(reportChannel(actor.getSnapshot() as ChannelSnapshot)).toEqual({
      code: "error",
      error: "permission denied",
      bitrate: 0,
    });
    actor.stop();
  });

  it("shows what is dropped while no connector is on the other end", () => {
    const fake = fakeOpener<unknown>();
    const actor = createActor(machine.provide({ actors: { channel: openerActor(fake.open) } } as never), {
      input,
    } as never).start();
    fake.last()!.cb.problem?.("12 frame(s) dropped (connector absent or too slow)");
    expect(reportChannel(actor.getSnapshot() as ChannelSnapshot)).toEqual({
      code: "disconnected",
      error: "12 frame(s) dropped (connector absent or too slow)",
      bitrate: 0,
    });
    actor.stop();
  });
});
