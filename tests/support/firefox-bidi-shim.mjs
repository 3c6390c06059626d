// Stands between playwright-core and Debian's firefox-esr on WebDriver BiDi. playwright-core 1.65 sets
// up every browser context with `emulation.setMediaFeaturesOverride` (prefers-color-scheme), a command
// firefox-esr 153 does not have ("unknown command"), so no page could ever open. This launcher runs
// Firefox with the arguments it is given, relays the BiDi WebSocket, answers only the commands in
// STUBBED itself (as a success that changes nothing), and passes everything else through untouched.
// Usage (as a browser executable): node firefox-bidi-shim.mjs <firefox binary> <firefox args...>
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { WebSocket, WebSocketServer } from "ws";

const STUBBED = new Set(["emulation.setMediaFeaturesOverride"]);
const [binary, ...args] = process.argv.slice(2);
const firefox = spawn(binary, args, { stdio: ["ignore", "inherit", "pipe"] });
for (const sig of ["SIGTERM", "SIGINT", "SIGHUP"]) process.on(sig, () => firefox.kill(sig));
firefox.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));

createInterface({ input: firefox.stderr }).on("line", (line) => {
  const m = /WebDriver BiDi listening on (ws:\/\/\S+)$/.exec(line);
  if (!m) return void process.stderr.write(`${line}\n`);
  const upstream = m[1];
  const server = new WebSocketServer({ host: "127.0.0.1", port: 0 }, () => {
    process.stderr.write(`WebDriver BiDi listening on ws://127.0.0.1:${server.address().port}\n`);
  });
  server.on("connection", (client, req) => relay(client, `${upstream}${req.url ?? ""}`));
});

function relay(client, url) {
  const ff = new WebSocket(url, { perMessageDeflate: false });
  const pending = [];
  ff.on("open", () => pending.splice(0).forEach((d) => ff.send(d)));
  ff.on("message", (data) => client.send(data.toString()));
  ff.on("close", () => client.close());
  ff.on("error", () => client.close());
  client.on("close", () => ff.close());
  client.on("message", (data) => {
    const text = data.toString();
    let msg;
    try {
      msg = JSON.parse(text);
    } catch {
      msg = undefined;
    }
    if (msg && STUBBED.has(msg.method))
      return void client.send(JSON.stringify({ type: "success", id: msg.id, result: {} }));
    if (ff.readyState === WebSocket.OPEN) ff.send(text);
    else pending.push(text);
  });
}
