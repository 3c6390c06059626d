// Model-based testing with xstate's graph utilities (xstate/graph, built into xstate 5):
// the machine is the model; a real actor (with fake openers driven by the test) is the system
// under test. For every transition of the model's adjacency map (every reachable state × every
// event), a fresh SUT is driven along the shortest path to the source state, then given the event,
// and must land in the state the model predicts. Every stable state node must be visited.
import { getAdjacencyMap, getShortestPaths, getStateNodes } from "xstate/graph";
import type { AnyMachineSnapshot, AnyStateMachine, EventObject } from "xstate";
import { expect } from "vitest";

export interface Sut<E extends EventObject> {
  /** Delivers the event the way it happens in production (e.g. through a fake opener's callbacks). */
  send(event: E): void;
  snapshot(): AnyMachineSnapshot;
  stop(): void;
}

export interface ModelSpec<E extends EventObject> {
  machine: AnyStateMachine;
  input: unknown;
  events: E[];
  /** Must only include bounded context, or the walk does not end. */
  serialize(s: AnyMachineSnapshot): string;
  sut(): Sut<E>;
  /** Extra assertion on every state the SUT reaches (e.g. its API report). */
  check?(model: AnyMachineSnapshot, real: AnyMachineSnapshot): void;
}

const settle = () => new Promise<void>((r) => setImmediate(r));

export async function walkEveryTransition<E extends EventObject>(spec: ModelSpec<E>) {
  const options = {
    input: spec.input,
    events: spec.events,
    serializeState: (s: AnyMachineSnapshot) => spec.serialize(s),
    limit: 100_000,
  } as never;
  const adjacency = getAdjacencyMap(spec.machine, options) as Record<
    string,
    { state: AnyMachineSnapshot; transitions: Record<string, { event: E; state: AnyMachineSnapshot }> }
  >;
  const paths = new Map<string, E[]>();
  for (const p of getShortestPaths(spec.machine, options) as { state: AnyMachineSnapshot; steps: { event: E }[] }[]) {
    paths.set(
      spec.serialize(p.state),
      p.steps.map((s) => s.event).filter((e) => e.type !== "xstate.init"),
    );
  }

  const visited = new Set<string>();
  let transitions = 0;
  for (const [from, { transitions: edges }] of Object.entries(adjacency)) {
    const path = paths.get(from);
    expect(path, `no path to ${from}`).toBeDefined();
    for (const { event, state: next } of Object.values(edges)) {
      const sut = spec.sut();
      try {
        await settle();
        for (const e of path!) {
          sut.send(e);
          await settle();
        }
        expect(spec.serialize(sut.snapshot()), `SUT after path to ${from}`).toBe(from);
        sut.send(event);
        await settle();
        const real = sut.snapshot();
        expect(spec.serialize(real), `${from} --${JSON.stringify(event)}-->`).toBe(spec.serialize(next));
        spec.check?.(next, real);
        for (const n of (real as unknown as { _nodes: { id: string }[] })._nodes) visited.add(n.id);
        transitions++;
      } finally {
        sut.stop();
      }
    }
  }
  // Every state node that can be at rest (not a pass-through `always` node) was reached.
  const stable = getStateNodes(spec.machine)
    .filter((n) => !(n.always && n.always.length > 0 && n.type === "atomic"))
    .map((n) => n.id);
  for (const id of stable) expect(visited, `state node ${id} never reached`).toContain(id);
  return { states: Object.keys(adjacency).length, transitions };
}
