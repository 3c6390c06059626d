// What the agent's reconnect and token-renewal counters count, from the state codes and tokens the supervisor
// sees: a return after a loss is a reconnect; the first connection, and enabling a disabled stream, are not.
import { expect, it } from "vitest";
import { LinkEvents } from "../../runtime/link-events.js";

it("counts a stream's return after a loss, not its first connection or a new start after disabling", () => {
  const e = new LinkEvents();
  const feed = (...codes: Parameters<LinkEvents["stream"]>[1][]) => {
    for (const c of codes) e.stream("upstreams/rt", c);
  };
  feed("disconnected", "connected", "quiet", "connected");
  expect(e.reconnects.get("upstreams/rt")).toBe(0);
  feed("disconnected", "disconnected", "quiet");
  expect(e.reconnects.get("upstreams/rt")).toBe(1);
  feed("error", "disconnected", "connected");
  expect(e.reconnects.get("upstreams/rt")).toBe(2);
  feed("none", "disconnected", "connected");
  expect(e.reconnects.get("upstreams/rt")).toBe(2);
});

it("counts a token that replaces one held, not the first or one after a failure", () => {
  const e = new LinkEvents();
  e.token(undefined, "a");
  e.token("a", "a");
  expect(e.tokenRefreshes).toBe(0);
  e.token("a", "b");
  expect(e.tokenRefreshes).toBe(1);
  e.token("b", undefined);
  e.token(undefined, "c");
  expect(e.tokenRefreshes).toBe(1);
});
