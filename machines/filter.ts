// Filter lifecycle: enabled ⇄ disabled, updated in place, removed (final). The machine owns the
// filter's run-time memory: for a sampling filter, the time of the last kept point per data id. An
// update keeps that memory (so changing the interval does not let a burst through); it is reset only
// when the filter stops being a sampling filter.
import { assign, setup, type SnapshotFrom } from "xstate";
import type { Filter } from "../runtime/settings/schemas.js";

/** Mutable on purpose: the data path writes it per point; the machine only decides its lifetime. */
export interface FilterMemory {
  /** data id (`type:name`) → elapsed time of the last point kept. */
  lastKept: Map<string, number>;
}
export const newMemory = (): FilterMemory => ({ lastKept: new Map() });

export type FilterEvent = { type: "SETTINGS"; settings: Filter } | { type: "REMOVE" } | { type: "TICK" };
interface Context {
  settings: Filter;
  memory: FilterMemory;
  /** How many updates were applied in place (for tests and logs). */
  revision: number;
}

export const filterMachine = setup({
  types: { context: {} as Context, events: {} as FilterEvent, input: {} as { settings: Filter } },
  guards: {
    enabled: ({ context }) => context.settings.enabled,
  },
  actions: {
    update: assign(({ context, event }) => {
      if (event.type !== "SETTINGS") return {};
      const keep = event.settings.change_to.type === context.settings.change_to.type;
      return { settings: event.settings, memory: keep ? context.memory : newMemory(), revision: context.revision + 1 };
    }),
  },
}).createMachine({
  id: "filter",
  context: ({ input }) => ({ settings: input.settings, memory: newMemory(), revision: 0 }),
  initial: "checking",
  states: {
    checking: { always: [{ guard: "enabled", target: "enabled" }, { target: "disabled" }] },
    enabled: {
      on: { SETTINGS: { target: "checking", actions: "update" }, REMOVE: "removed" },
    },
    disabled: {
      on: { SETTINGS: { target: "checking", actions: "update" }, REMOVE: "removed" },
    },
    removed: { type: "final" },
  },
});
export type FilterSnapshot = SnapshotFrom<typeof filterMachine>;
