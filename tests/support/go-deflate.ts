// Drives go-deflate/main.go: messages compressed and decompressed by Go's compress/flate, framed as the published
// Go client frames them, for interoperability tests. `buildGoDeflate()` compiles it once per test file (Go is
// needed on the test machine); each `goDeflatePeer()` is one connection's pair of contexts.
import { execFileSync, spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { MessageTransport } from "../../proto/transport/message-transport.js";
import { decodeMessage, encodeMessage, type iscp2, type Message } from "../../proto/wire/message.js";
import { waitFor } from "./iscp-broker.js";

const SOURCE = fileURLToPath(new URL("./go-deflate/main.go", import.meta.url));

export interface GoDeflateOptions {
  level?: number;
  transport: "ws" | "quic";
  takeover?: boolean;
  winbits?: number;
  /** Each message a zlib stream, as iscp-go before 1.1.0 frames them on QUIC. */
  zlib?: boolean;
  /** The context is the first 2^winbits bytes, as iscp-go before 1.1.0 keeps it. */
  keepFirst?: boolean;
}

export interface GoDeflatePeer {
  compress(msg: Uint8Array): Promise<Buffer>;
  decompress(bytes: Uint8Array): Promise<Buffer>;
  close(): void;
}

/** Compiles the helper into a temp dir; returns its path and a cleanup. */
export function buildGoDeflate(): { bin: string; cleanup(): void } {
  const dir = mkdtempSync(join(tmpdir(), "go-deflate-"));
  const bin = join(dir, "go-deflate");
  execFileSync("go", ["build", "-o", bin, SOURCE], {
    // Go's own build cache where there is a home for it (a newer Go compiles its standard library into it once).
    env: {
      ...process.env,
      ...(process.env.HOME || process.env.GOCACHE ? {} : { GOCACHE: join(dir, "cache") }),
      GO111MODULE: "off",
      GOFLAGS: "",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  return { bin, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export function goDeflatePeer(bin: string, o: GoDeflateOptions): GoDeflatePeer {
  const args = [
    "-level",
    String(o.level ?? 6),
    "-transport",
    o.transport,
    `-takeover=${o.takeover ?? false}`,
    "-winbits",
    String(o.winbits ?? 15),
    `-zlib=${o.zlib ?? false}`,
    `-keep-first=${o.keepFirst ?? false}`,
  ];
  const child: ChildProcessWithoutNullStreams = spawn(bin, args);
  let buffered = Buffer.alloc(0);
  const waiting: { resolve(b: Buffer): void; reject(e: Error): void }[] = [];
  child.stdout.on("data", (d: Buffer) => {
    buffered = Buffer.concat([buffered, d]);
    while (buffered.length >= 5 && buffered.length >= 5 + buffered.readUInt32BE(1)) {
      const n = buffered.readUInt32BE(1);
      const body = buffered.subarray(5, 5 + n);
      const status = buffered[0];
      buffered = buffered.subarray(5 + n);
      const w = waiting.shift()!;
      if (status === 0) w.resolve(Buffer.from(body));
      else w.reject(new Error(`go: ${body.toString()}`));
    }
  });
  // Requests are answered in order, so one queue of waiters matches replies to requests.
  const ask = (op: "c" | "d", bytes: Uint8Array) =>
    new Promise<Buffer>((resolve, reject) => {
      waiting.push({ resolve, reject });
      const head = Buffer.alloc(5);
      head.write(op, 0);
      head.writeUInt32BE(bytes.length, 1);
      child.stdin.write(Buffer.concat([head, bytes]));
    });
  return {
    compress: (m) => ask("c", m),
    decompress: (b) => ask("d", b),
    close: () => child.kill(),
  };
}

/** An iSCP peer whose messages are compressed and decompressed by Go, over a transport that sends frames as they are. */
export interface GoFramedPeer {
  send(m: Message): void;
  next(kind: string, timeoutMs?: number): Promise<iscp2.Message>;
  /** Frames received so far, as they came off the wire (compressed). */
  frames: Uint8Array[];
  close(): void;
}

export function goFramedPeer(t: MessageTransport, go: GoDeflatePeer): GoFramedPeer {
  const msgs: iscp2.Message[] = [];
  const frames: Uint8Array[] = [];
  // One chain per direction keeps the contexts in message order.
  let out = Promise.resolve();
  let inn = Promise.resolve();
  t.onMessage((frame) => {
    const copy = Buffer.from(frame);
    frames.push(copy);
    inn = inn.then(async () => void msgs.push(decodeMessage(await go.decompress(copy), "proto")));
  });
  return {
    frames,
    send(m) {
      out = out.then(async () => t.send(await go.compress(encodeMessage(m, "proto"))));
    },
    async next(kind, timeoutMs = 5000) {
      let m: iscp2.Message | undefined;
      await waitFor(() => (m = msgs.find((x) => x.message === kind)) !== undefined, timeoutMs, kind);
      msgs.splice(msgs.indexOf(m!), 1);
      return m!;
    },
    close() {
      t.close();
      go.close();
    },
  };
}
