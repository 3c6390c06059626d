// Vitest setup file of the sqlite and postgres projects, whose workers run file after file (vitest.config.ts): a test
// file leaves the process's globals as it found them. A global it replaced is put back after its last hook, so that
// the next file in the worker does not run on it. What this guards against: importing @aptpod/iscp-ts installs
// web-streams-polyfill over Node's ReadableStream, WritableStream, TransformStream and their helpers, and Node's fetch,
// which looks them up at each call, then stalls on a response body of more than about 64 KB (docs/iscp.md): left in
// place, a later file's fetch of an OpenAPI document, a data read-back or an event stream gets no answer.
// Globals a file adds are left alone: Node, undici and effect add theirs when first used, and keep state in them.
import { afterAll } from "vitest";

const found = new Map<PropertyKey, PropertyDescriptor>();
for (const key of Reflect.ownKeys(globalThis)) found.set(key, Object.getOwnPropertyDescriptor(globalThis, key)!);

/** Whether now is a different thing in the place of was. Node's lazy globals turn from a getter into the value it
 * returns when first read: not a change. */
function replaced(was: PropertyDescriptor, now: PropertyDescriptor | undefined): boolean {
  if (now === undefined) return true;
  if ("value" in was) return !("value" in now) || !Object.is(was.value, now.value);
  if ("value" in now) return !Object.is(was.get!.call(globalThis), now.value);
  return was.get !== now.get || was.set !== now.set;
}

afterAll(() => {
  for (const [key, was] of found) {
    if (replaced(was, Object.getOwnPropertyDescriptor(globalThis, key))) Object.defineProperty(globalThis, key, was);
  }
});
