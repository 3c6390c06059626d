// `npm run test:busy`: the whole vitest suite (every project `npm test` runs) on a busy machine: two busy
// processes (`node -e 'for(;;){}'`, one per core of a two-core machine) run beside it from start to end, so
// a test that depends on timing fails here rather than on a user's loaded machine. The type-check and the
// lint are left out: they do not depend on the load. The busy processes are stopped by their PIDs however
// the run ends (its end, an error, Ctrl-C or SIGTERM). Extra arguments go to vitest.
import { spawn } from "node:child_process";
import path from "node:path";

const BUSY = Number(process.env.TEST_BUSY_PROCESSES ?? 2);
const root = path.resolve(import.meta.dirname, "..");
const busy = Array.from({ length: BUSY }, () => spawn(process.execPath, ["-e", "for(;;){}"], { stdio: "ignore" }));
const stopBusy = () => {
  for (const b of busy) if (b.exitCode === null && b.signalCode === null) b.kill("SIGKILL");
};
process.on("exit", stopBusy);
console.log(`test:busy: ${busy.length} busy processes beside the suite (PIDs ${busy.map((b) => b.pid).join(", ")})`);

const vitest = spawn(
  process.execPath,
  [
    path.join(root, "node_modules", "vitest", "vitest.mjs"),
    "run",
    "--project",
    "sqlite",
    "--project",
    "postgres",
    "--project",
    "quick",
    ...process.argv.slice(2),
  ],
  { cwd: root, stdio: "inherit" },
);
for (const signal of ["SIGINT", "SIGTERM"])
  process.on(signal, () => {
    vitest.kill(signal);
  });
vitest.on("exit", (code, signal) => {
  stopBusy();
  process.exit(code ?? (signal ? 1 : 0));
});
