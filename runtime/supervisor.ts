// The supervisor actor: one child machine per connection, stream, IPC channel, filter and the
// deferred upload, spawned, updated and stopped as the settings change (SYNC), driven by one clock
// (TICK), and fed the session the connection machine holds (SESSION). The Supervisor class around it
// wires the settings store and the openers, stamps update_time, and answers the API's state queries.
import { createActor, enqueueActions, setup, type Actor, type AnyActorRef, type AnyMachineSnapshot } from "xstate";
import { TICK_MS, type Report, type Session } from "../machines/vocabulary.js";
import {
  connectionMachine,
  reportConnection,
  sessionOf,
  tokenActor,
  type ConnectionSnapshot,
  type TokenFetch,
} from "../machines/connection.js";
import {
  deferredUploadMachine,
  reportDeferred,
  type DeferredSnapshot,
  type UploaderOpener,
} from "../machines/deferred-upload.js";
import { filterMachine, type FilterMemory, type FilterSnapshot } from "../machines/filter.js";
import {
  downstreamIpcMachine,
  reportChannel,
  upstreamIpcMachine,
  type ChannelOpener,
  type ChannelSnapshot,
} from "../machines/ipc-channel.js";
import { openerActor } from "../machines/link.js";
import {
  downstreamMachine,
  reportStream,
  upstreamMachine,
  type StreamOpener,
  type StreamSnapshot,
} from "../machines/stream.js";
import type {
  DeferredUploadState,
  DownstreamIpcSettings,
  DownstreamSettings,
  IpcState,
  StreamState,
  UpstreamIpcSettings,
  UpstreamSettings,
} from "./settings/schemas.js";
import { fetchToken } from "./deferred/cloud-auth.js";
import { LinkEvents } from "./link-events.js";
import { COLLECTIONS, type AllSettings, type CollectionName, type SettingsStore } from "./settings/store.js";

export type StatefulCollection = "upstreams" | "downstreams" | "upstream_ipcs" | "downstream_ipcs";

export interface StateReader {
  state(kind: StatefulCollection, item: { id: string; enabled: boolean }): StreamState | IpcState;
  deferredUpload(): DeferredUploadState;
}

const SRC = {
  upstreams: "upstream",
  downstreams: "downstream",
  upstream_ipcs: "upstreamIpc",
  downstream_ipcs: "downstreamIpc",
  upstream_filters: "filter",
  downstream_filters: "filter",
} as const;
const STREAM_KINDS: CollectionName[] = ["upstreams", "downstreams"];
export const childId = (kind: CollectionName, id: string) => `${kind}/${id}`;
const isFilter = (child: string) => child.startsWith("upstream_filters/") || child.startsWith("downstream_filters/");

type SupervisorEvent =
  | { type: "SYNC"; all: AllSettings }
  | { type: "TICK" }
  | { type: "SESSION"; session?: Session; reason: string }
  | { type: "FORWARD"; to: string; event: { type: string; [k: string]: unknown } };

interface Context {
  /** childId → JSON of the settings the child was last given. */
  known: Record<string, string>;
  session?: Session;
  sessionReason: string;
}

export const supervisorMachine = setup({
  types: { context: {} as Context, events: {} as SupervisorEvent },
  actors: {
    connection: connectionMachine,
    deferredUpload: deferredUploadMachine,
    upstream: upstreamMachine,
    downstream: downstreamMachine,
    upstreamIpc: upstreamIpcMachine,
    downstreamIpc: downstreamIpcMachine,
    filter: filterMachine,
  },
  actions: {
    sync: enqueueActions(({ context, enqueue }, params: { all: AllSettings }) => {
      const all = params.all;
      const known = { ...context.known };
      const sessionInput = { session: context.session, sessionReason: context.sessionReason };
      const connJson = JSON.stringify([all.connection, all.transport]);
      if (known.connection === undefined)
        enqueue.spawnChild("connection", {
          id: "connection",
          input: { connection: all.connection, transport: all.transport },
        });
      else if (known.connection !== connJson)
        enqueue.sendTo("connection", { type: "SETTINGS", connection: all.connection, transport: all.transport });
      known.connection = connJson;
      const deferredJson = JSON.stringify(all.deferred_upload);
      if (known.deferred_upload === undefined)
        enqueue.spawnChild("deferredUpload", {
          id: "deferred_upload",
          input: { settings: all.deferred_upload, ...sessionInput },
        });
      else if (known.deferred_upload !== deferredJson)
        enqueue.sendTo("deferred_upload", { type: "SETTINGS", settings: all.deferred_upload });
      known.deferred_upload = deferredJson;
      const wanted = new Set(["connection", "deferred_upload"]);
      for (const kind of COLLECTIONS) {
        for (const item of all[kind]) {
          const id = childId(kind, item.id);
          const json = JSON.stringify(item);
          wanted.add(id);
          if (known[id] === undefined) {
            const input = STREAM_KINDS.includes(kind) ? { settings: item, ...sessionInput } : { settings: item };
            enqueue.spawnChild(SRC[kind], { id, input: input as never });
          } else if (known[id] !== json) enqueue.sendTo(id, { type: "SETTINGS", settings: item });
          known[id] = json;
        }
      }
      for (const id of Object.keys(known)) {
        if (wanted.has(id)) continue;
        if (isFilter(id)) enqueue.sendTo(id, { type: "REMOVE" });
        enqueue.stopChild(id);
        delete known[id];
      }
      enqueue.assign({ known });
    }),
  },
}).createMachine({
  id: "supervisor",
  context: { known: {}, sessionReason: "authenticating with the server" },
  on: {
    SYNC: { actions: { type: "sync", params: ({ event }) => ({ all: event.all }) } },
    TICK: {
      actions: enqueueActions(({ context, enqueue }) => {
        for (const id of Object.keys(context.known)) if (!isFilter(id)) enqueue.sendTo(id, { type: "TICK" });
      }),
    },
    SESSION: {
      actions: enqueueActions(({ context, event, enqueue }) => {
        enqueue.assign({ session: event.session, sessionReason: event.reason });
        for (const id of Object.keys(context.known))
          if (id === "deferred_upload" || STREAM_KINDS.some((k) => id.startsWith(`${k}/`)))
            enqueue.sendTo(id, { type: "SESSION", session: event.session, reason: event.reason });
      }),
    },
    FORWARD: {
      actions: enqueueActions(({ context, event, enqueue }) => {
        if (context.known[event.to] !== undefined) enqueue.sendTo(event.to, event.event as never);
      }),
    },
  },
});

export interface Openers {
  upstream?: StreamOpener<UpstreamSettings>;
  downstream?: StreamOpener<DownstreamSettings>;
  upstreamIpc?: ChannelOpener<UpstreamIpcSettings>;
  downstreamIpc?: ChannelOpener<DownstreamIpcSettings>;
  uploader?: UploaderOpener;
  /** The connection machine's token request; default: the cloud's OAuth 2.0 token endpoint. */
  fetchToken?: TokenFetch;
}

interface Stamp {
  key: string;
  time: string;
}

/** Runs the supervisor actor for a settings store; the daemon and the API use this. */
export class Supervisor implements StateReader {
  readonly actor: Actor<typeof supervisorMachine>;
  private readonly stamps = new Map<string, Stamp>();
  private readonly closing = new Set<Promise<unknown>>();
  private lastSession = "";
  /** The token the connection machine holds now (sessions read it through currentToken). */
  private token: string | undefined;
  private clock?: NodeJS.Timeout;
  /** Reconnects and token renewals, for the metrics. */
  readonly linkEvents = new LinkEvents();
  private unsubscribe?: () => void;

  constructor(
    private readonly store: SettingsStore,
    openers: Openers = {},
  ) {
    const track = (p: Promise<unknown>) => {
      this.closing.add(p);
      void p.finally(() => this.closing.delete(p));
    };
    const machine = supervisorMachine.provide({
      actors: {
        connection: connectionMachine.provide({ actors: { fetchToken: tokenActor(openers.fetchToken ?? fetchToken) } }),
        upstream: openers.upstream
          ? upstreamMachine.provide({ actors: { link: openerActor(openers.upstream, track) } })
          : upstreamMachine,
        downstream: openers.downstream
          ? downstreamMachine.provide({ actors: { link: openerActor(openers.downstream, track) } })
          : downstreamMachine,
        upstreamIpc: openers.upstreamIpc
          ? upstreamIpcMachine.provide({ actors: { channel: openerActor(openers.upstreamIpc, track) } })
          : upstreamIpcMachine,
        downstreamIpc: openers.downstreamIpc
          ? downstreamIpcMachine.provide({ actors: { channel: openerActor(openers.downstreamIpc, track) } })
          : downstreamIpcMachine,
        deferredUpload: openers.uploader
          ? deferredUploadMachine.provide({ actors: { uploader: openerActor(openers.uploader, track) } })
          : deferredUploadMachine,
      },
    });
    this.actor = createActor(machine, {
      inspect: (ev) => {
        if (ev.type !== "@xstate.snapshot") return;
        const id = (ev.actorRef as AnyActorRef).id;
        if (id === "connection") this.onConnection(ev.snapshot as ConnectionSnapshot);
        const report = this.reportOf(id, ev.snapshot as AnyMachineSnapshot);
        if (report) this.stamp(id, report);
        if (report && (id.startsWith("upstreams/") || id.startsWith("downstreams/")))
          this.linkEvents.stream(id, report.code);
      },
    });
  }

  start(): this {
    this.actor.start();
    this.actor.send({ type: "SYNC", all: this.store.all() });
    this.unsubscribe = this.store.onChange((all) => this.actor.send({ type: "SYNC", all }));
    this.clock = setInterval(() => this.actor.send({ type: "TICK" }), TICK_MS);
    this.clock.unref();
    return this;
  }

  /** Stops every machine and waits (bounded) for links, channels and connectors to close. */
  async stop(timeoutMs = 10_000): Promise<void> {
    clearInterval(this.clock);
    this.unsubscribe?.();
    this.actor.stop();
    const all = Promise.allSettled([...this.closing]);
    await Promise.race([all, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
  }

  /** For the data path: bytes moved by a stream or channel, pending deferred bytes. */
  data(kind: StatefulCollection, id: string, bytes: number): void {
    this.actor.send({ type: "FORWARD", to: childId(kind, id), event: { type: "DATA", bytes } });
  }
  pending(bytes: number): void {
    this.actor.send({ type: "FORWARD", to: "deferred_upload", event: { type: "PENDING", bytes } });
  }
  filterMemory(kind: "upstream_filters" | "downstream_filters", id: string): FilterMemory | undefined {
    return (this.child(childId(kind, id)) as FilterSnapshot | undefined)?.context.memory;
  }
  connectionReport(): Report | undefined {
    const s = this.child("connection") as ConnectionSnapshot | undefined;
    return s ? reportConnection(s) : undefined;
  }

  state(kind: StatefulCollection, item: { id: string; enabled: boolean }): StreamState | IpcState {
    const id = childId(kind, item.id);
    const snap = this.child(id);
    const report = (snap && this.reportOf(id, snap)) || { code: "none" as const, error: "", bitrate: 0 };
    const base = {
      id: item.id,
      enabled: item.enabled,
      code: report.code,
      error: report.error,
      update_time: this.stamp(id, report),
    };
    return kind === "upstreams" || kind === "downstreams" ? { ...base, bitrate: report.bitrate } : base;
  }

  deferredUpload(): DeferredUploadState {
    const snap = this.child("deferred_upload") as DeferredSnapshot | undefined;
    const report: Report = snap ? reportDeferred(snap) : { code: "none", error: "", bitrate: 0 };
    return {
      code: report.code,
      error: report.error,
      bitrate: report.bitrate,
      update_time: this.stamp("deferred_upload", report),
    };
  }

  private reportOf(id: string, snap: AnyMachineSnapshot): Report | undefined {
    if (id === "deferred_upload") return reportDeferred(snap as DeferredSnapshot);
    if (id.startsWith("upstreams/") || id.startsWith("downstreams/")) return reportStream(snap as StreamSnapshot);
    if (id.startsWith("upstream_ipcs/") || id.startsWith("downstream_ipcs/"))
      return reportChannel(snap as ChannelSnapshot);
    return undefined;
  }

  private child(id: string): AnyMachineSnapshot | undefined {
    const ref = (this.actor.getSnapshot().children as Record<string, AnyActorRef | undefined>)[id];
    return ref?.getSnapshot() as AnyMachineSnapshot | undefined;
  }

  /** update_time: when code or error last changed (RFC 3339 UTC, second precision). */
  private stamp(id: string, r: Report): string {
    const key = `${r.code}\u0000${r.error}`;
    const prev = this.stamps.get(id);
    if (prev && prev.key === key) return prev.time;
    const time = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
    this.stamps.set(id, { key, time });
    return time;
  }

  private onConnection(s: ConnectionSnapshot): void {
    const { session, reason } = sessionOf(s);
    this.linkEvents.token(this.token, session?.accessToken);
    this.token = session?.accessToken;
    const key = JSON.stringify([session, reason]);
    if (key === this.lastSession) return;
    this.lastSession = key;
    // Every session reads the token held now, so what was opened with an older one can reconnect.
    const current = session && { ...session, currentToken: () => this.token ?? session.accessToken };
    this.actor.send({ type: "SESSION", session: current, reason });
  }
}
