// Fakes for machine tests: an opener the test drives, a token request the test settles, and a sender
// that delivers LINK.* and DATA events through the opener's callbacks (as production does) and
// everything else to the actor. Tests inject them with `.provide`, as runtime/supervisor.ts does.
import type { ConnectionSettings } from "../../runtime/settings/schemas.js";
import { tokenActor, type Token } from "../../machines/connection.js";
import type { Callbacks } from "../../machines/link.js";

/** A link opener the test drives: the latest call's callbacks deliver LINK.* and DATA events. */
export function fakeOpener<P>() {
  const calls: { params: P; cb: Callbacks; closed: boolean }[] = [];
  return {
    calls,
    open: (params: P, cb: Callbacks) => {
      const call = { params, cb, closed: false };
      calls.push(call);
      return { close: () => void (call.closed = true) };
    },
    last: () => calls[calls.length - 1],
  };
}

/** A token request the test settles: `actor` is the connection machine's `fetchToken`. */
export function fakeTokens() {
  const pending: { resolve(t: Token): void; reject(e: Error): void; input: ConnectionSettings }[] = [];
  const actor = tokenActor((input) => new Promise((resolve, reject) => pending.push({ resolve, reject, input })));
  return { pending, actor };
}

export type Ev = { type: string; [k: string]: unknown };

export function driver(actor: { send(e: never): void }, fake: ReturnType<typeof fakeOpener<unknown>>) {
  return (e: Ev) => {
    const cb = fake.last()?.cb;
    if (e.type === "LINK.OPENED") cb?.opened();
    else if (e.type === "LINK.CLOSED") cb?.closed(String(e.reason));
    else if (e.type === "LINK.FAILED") cb?.failed(String(e.reason), e.permanent === true);
    else if (e.type === "DATA") cb?.data(Number(e.bytes));
    else if (e.type === "LINK.INTERRUPTED") cb?.interrupted?.(String(e.reason));
    else if (e.type === "LINK.PROBLEM") cb?.problem?.(String(e.text), e.severe === true);
    else actor.send(e as never);
  };
}
