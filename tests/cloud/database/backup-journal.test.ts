// The ingest journal across `cloud-peer backup` and `restore`, and `migrate-store`: acknowledged chunks a crash
// left in the journal are in the backup and stored by the restored peer's start; a restore over a directory drops
// that directory's journal with its database; migrate-store refuses a directory whose journal still holds chunks.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { encodeJournalRecord } from "../../../cloud/measurements/ingest/journal-codec.js";
import { JournalFiles } from "../../../cloud/measurements/storage/journal-files.js";
import { startTestPeer } from "../harness.js";
import { adminToken, caller, EDGE, ndjson, P, uuid } from "../measurements/helpers.js";
import { runCloudPeer as run } from "./cloud-peer-cli.js";

/** Leaves in `dataDir`'s journal a record of `texts` on a new session, as a crash after their acks would. */
async function leaveInJournal(dataDir: string, texts: string[]): Promise<string> {
  const session = uuid();
  const { files } = await JournalFiles.open(path.join(dataDir, "ingest-journal"), "power-loss");
  await files.append(
    encodeJournalRecord([
      {
        up: { streamId: uuid(), sessionId: session, projectUuid: "00000000-0000-0000-0000-000000000000", nodeId: EDGE },
        chunks: texts.map((t, i) => ({
          sequenceNumber: i + 1,
          groups: [{ name: "b/t", type: "string", points: [{ elapsedNs: BigInt(i), payload: Buffer.from(t) }] }],
        })),
      },
    ]),
  );
  await files.close();
  return session;
}

/** The session's points as text on a peer started on `dataDir` with the journal on. */
async function storedOn(dataDir: string, session: string): Promise<string[]> {
  const peer = await startTestPeer({ dataDir, config: { ingestJournal: "on" } });
  try {
    const call = caller(peer, await adminToken(peer, `check ${uuid()}`));
    const r = await call(`${P}/data?name=${session}`);
    expect(r.status).toBe(200);
    return ndjson((r.body as string | undefined) ?? "").map((l) => Buffer.from(l.data.d, "base64").toString());
  } finally {
    await peer.stop();
  }
}

describe("the ingest journal in backups", () => {
  let dir: string;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "backup-journal-"));
  });
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  it("backs up what the journal holds, and the restored peer stores it; a restore drops the old journal", async () => {
    const data = path.join(dir, "data");
    await (await startTestPeer({ dataDir: data, config: { ingestJournal: "on" } })).stop();
    const session = await leaveInJournal(data, ["one", "two"]);
    const made = await run(["backup", "--data", data, "--to", path.join(dir, "backup")]);
    expect(made.code, made.stderr).toBe(0);

    const other = path.join(dir, "other");
    await (await startTestPeer({ dataDir: other, config: { ingestJournal: "on" } })).stop();
    const stale = await leaveInJournal(other, ["stale"]);
    const restored = await run(["restore", "--from", path.join(dir, "backup"), "--data", other, "--force"]);
    expect(restored.code, restored.stderr).toBe(0);

    expect(await storedOn(other, session)).toEqual(["one", "two"]);
    expect(await storedOn(other, stale)).toEqual([]);
  }, 120_000);

  it("migrate-store refuses a directory whose journal holds chunks", async () => {
    const data = path.join(dir, "data");
    await (await startTestPeer({ dataDir: data, config: { ingestJournal: "on" } })).stop();
    await leaveInJournal(data, ["x"]);
    const refused = await run(["migrate-store", "--from", `sqlite:${data}`, "--to", "postgres://127.0.0.1:1/none"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("the ingest journal holds acknowledged chunks");
  }, 60_000);
});
