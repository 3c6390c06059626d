// The faults the soak injects, each a begin and an end (an outage lasts from one to the other), and which rows
// each applies to. A fault's end is when the system has what it needs to recover; the live gap is measured from
// there.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import { sleep } from "../../runtime/device-bench/children.js";
import type { AcceptedCounter } from "./counts.js";
import type { System } from "./system.js";

export interface FaultContext {
  accepted: AcceptedCounter;
  note(msg: string): void;
}

export interface Fault {
  name: string;
  /** Whether the row has what the fault needs. */
  applies(sys: System): boolean;
  /** It restarts the agent or the cloud, whose RSS slope is judged on long runs. */
  restarts?: boolean;
  begin(sys: System, ctx: FaultContext): Promise<void>;
  end(sys: System, ctx: FaultContext): Promise<void>;
}

/** Serial numbers of renewed certificates: the first pair is 01. */
let renewals = 1;

/**
 * Shrinks the tmpfs at `dir` to what it holds (remount, no memory spent on a ballast): every write that needs a
 * new page fails with ENOSPC. Data written meanwhile can make the size too small for a remount: measured again.
 */
function shrinkToUsed(dir: string): void {
  for (let attempt = 0; ; attempt++) {
    const st = fs.statfsSync(dir);
    const usedKiB = Math.ceil(((st.blocks - st.bfree) * st.bsize) / 1024);
    try {
      return void execFileSync("mount", ["-o", `remount,size=${usedKiB}k`, dir], { stdio: "ignore" });
    } catch (e) {
      if (attempt >= 20) throw new Error(`could not shrink ${dir} to ${usedKiB} KiB: ${(e as Error).message}`);
    }
  }
}

/** Waits until the agent has read everything in its FIFO (the connector is stopped): its count stands still. */
async function drained(sys: System, ctx: FaultContext): Promise<void> {
  let last = -1;
  for (let i = 0; i < 100; i++) {
    const r = await ctx.accepted.read(sys.agent.pid, sys.api());
    if (r && r.received === last) return;
    last = r?.received ?? -1;
    await sleep(200);
  }
  ctx.note("agent-restart: the agent's FIFO count did not settle within 20 s");
}

export const FAULTS: Fault[] = [
  {
    name: "cloud-kill",
    restarts: true,
    applies: () => true,
    begin: async (sys) => void (await sys.clouds[0]!.stop("SIGKILL")),
    end: async (sys) => void (await sys.clouds[0]!.start()),
  },
  {
    name: "proxy-cut",
    applies: (sys) => sys.proxy !== undefined,
    begin: async (sys) => {
      sys.proxy!.refuse(true);
      sys.proxy!.cut();
    },
    end: async (sys) => sys.proxy!.refuse(false),
  },
  {
    name: "disk-full",
    applies: (sys) => sys.disk !== undefined,
    begin: async (sys) => shrinkToUsed(sys.disk!.dir),
    end: async (sys) =>
      void execFileSync("mount", ["-o", `remount,size=${sys.disk!.mib}m`, sys.disk!.dir], { stdio: "ignore" }),
  },
  {
    name: "postgres-stop",
    applies: (sys) => sys.pg !== undefined,
    begin: async (sys) => sys.pg!.halt(),
    end: async (sys) => sys.pg!.resume(),
  },
  {
    name: "nats-stop",
    applies: (sys) => sys.nats !== undefined,
    begin: async (sys) => sys.nats!.pause(),
    end: async (sys) => sys.nats!.resume(),
  },
  {
    // A renewed pair in the files the cloud reads, then SIGHUP: new connections get it, open ones go on.
    name: "cert-renewal",
    applies: () => true,
    begin: async (sys) => {
      const serial = (renewals = renewals + 1).toString(16).toUpperCase().padStart(2, "0");
      sys.tls.renew(serial);
      for (const c of sys.clouds) if (c.pid !== undefined) process.kill(c.pid, "SIGHUP");
      for (let i = 0; ; i++) {
        const got = await sys.tls.served(sys.ports[0]!).catch(() => "");
        if (got === serial.replace(/^0+/, "")) return;
        if (i >= 50) throw new Error(`the cloud still serves certificate ${got} 10 s after SIGHUP, not ${serial}`);
        await sleep(200);
      }
    },
    end: async () => undefined,
  },
  {
    // The connector is paused around the restart and the agent drains its FIFO first: what sits in a pipe
    // whose reader exits is the pipe's to lose, not the agent's (the agent's durable queue is what is tested).
    name: "agent-restart",
    restarts: true,
    applies: () => true,
    begin: async (sys, ctx) => {
      process.kill(sys.connector.pid!, "SIGSTOP");
      await drained(sys, ctx);
      const { forced } = await sys.agent.stop("SIGTERM");
      if (forced) ctx.note("agent-restart: the agent did not stop within 15 s of SIGTERM (killed)");
    },
    end: async (sys) => {
      await sys.agent.start();
      process.kill(sys.connector.pid!, "SIGCONT");
    },
  },
];

/** The row's faults (`only` these, when given) in turn: the runner takes the next one while time remains. */
export function faultCycle(sys: System, only?: string[]): (o?: { restarts: boolean }) => Fault | undefined {
  const unknown = only?.filter((n) => !FAULTS.some((f) => f.name === n)) ?? [];
  if (unknown.length)
    throw new Error(`unknown fault ${unknown.join(", ")}; known: ${FAULTS.map((f) => f.name).join(", ")}`);
  const faults = FAULTS.filter((f) => f.applies(sys) && (!only || only.includes(f.name)));
  let k = 0;
  return (o = { restarts: true }) => {
    const allowed = faults.filter((f) => o.restarts || !f.restarts);
    return allowed.length ? allowed[k++ % allowed.length] : undefined;
  };
}
