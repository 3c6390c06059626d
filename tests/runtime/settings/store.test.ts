// The settings store: a listener that throws (the data path, the supervisor) neither fails a write that
// is already committed nor keeps the other listeners from hearing of it.
import { rm } from "node:fs/promises";
import { afterEach, describe, expect, it } from "vitest";
import { SettingsStore } from "../../../runtime/settings/store.js";
import { tempDir } from "../../support/agent.js";

const dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs.splice(0)) await rm(d, { recursive: true, force: true });
});

const up = (id: string) => ({
  id,
  enabled: true,
  recover: true,
  persist: true,
  qos: "unreliable" as const,
  flush_policy: "interval" as const,
  flush_interval: 5,
});

describe("settings store listeners", () => {
  it("isolates a throwing listener: the write stands, the others are told, the error is reported", async () => {
    const dir = await tempDir("store-");
    dirs.push(dir);
    const errors: unknown[] = [];
    const store = SettingsStore.open(dir, { onListenerError: (e) => errors.push(e) });
    const heard: string[][] = [];
    store.onChange(() => {
      throw new Error("data path refused");
    });
    store.onChange((all) => heard.push(all.upstreams.map((u) => u.id)));
    expect(() => store.put("upstreams", up("a"))).not.toThrow();
    expect(() => store.setSingleton("transport", { protocol: "quic", send_queue_size: 1 })).not.toThrow();
    expect(() => store.remove("upstreams", "a")).not.toThrow();
    expect(heard).toEqual([["a"], ["a"], []]);
    expect(errors.map((e) => (e as Error).message)).toEqual([
      "data path refused",
      "data path refused",
      "data path refused",
    ]);
    await store.close();

    const again = SettingsStore.open(dir);
    // Fields the stored record lacks (compression, added later) come back as their defaults.
    expect(again.getSingleton("transport")).toEqual({
      protocol: "quic",
      send_queue_size: 1,
      compression_level: 0,
      compression_window_bits: 0,
    });
    await again.close();
  });
});
