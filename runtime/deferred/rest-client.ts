// The cloud's measurement REST API as deferred upload uses it (the intdash REST API's measurement operations): create the
// measurement with its UUID if absent, store chunks of a sequence (protobuf StoreDataChunks), set a
// sequence's final counts, end and complete the measurement. Every call carries the session's token.
import { readError } from "./cloud-auth.js";
import { errorMessage, tokenOf, type Session } from "../../machines/vocabulary.js";

const TIMEOUT_MS = 30_000;
export const STORE_DATA_CHUNKS_TYPE = "application/vnd.iscp.v2.protobuf";

/** A refusal from the cloud; `status` 0 when it could not be reached. */
export class RestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Epoch nanoseconds (decimal string) as RFC 3339 with nanoseconds, as the REST API takes base times. */
export function rfc3339FromNs(ns: string): string {
  const n = BigInt(ns);
  const s = n / 1_000_000_000n;
  const frac = (n % 1_000_000_000n).toString().padStart(9, "0");
  return new Date(Number(s) * 1000).toISOString().replace(/\.\d{3}Z$/, `.${frac}Z`);
}

export interface ChunkResult {
  sequence_number: number;
  result: "ok" | "skipped" | string;
}

export class MeasurementRestClient {
  private readonly base: string;

  constructor(private readonly session: Session) {
    const c = session.connection;
    this.base = `${c.server_url.replace(/\/+$/, "")}/api/v1/projects/${c.project_uuid}`;
  }

  /** Creates the measurement under its own UUID; one that exists already (409) is fine. */
  async ensureMeasurement(uuid: string, baseTimeNs: string): Promise<void> {
    const body = {
      basetime: rfc3339FromNs(baseTimeNs),
      basetime_type: "edge_rtc",
      edge_uuid: this.session.connection.edge_uuid,
    };
    await this.call("POST", `/measurements/${uuid}`, JSON.stringify(body), "application/json", [409]);
  }

  /** Stores encoded StoreDataChunks; returns per chunk `ok` or `skipped` (already stored). */
  async storeChunks(body: Uint8Array): Promise<ChunkResult[]> {
    const res = await this.call("POST", "/measurements/sequences/chunks", body, STORE_DATA_CHUNKS_TYPE);
    const j = (await res.json()) as { items?: ChunkResult[] };
    return j.items ?? [];
  }

  /** The sequence's totals, so the cloud can tell when it holds all of it. */
  async finishSequence(measUuid: string, seqUuid: string, expectedPoints: number, finalChunkNo: number): Promise<void> {
    const body = JSON.stringify({ expected_data_points: expectedPoints, final_sequence_number: finalChunkNo });
    await this.call("PATCH", `/measurements/${measUuid}/sequences/${seqUuid}`, body, "application/json");
  }

  /** Everything the agent had of the measurement is in the cloud. */
  async complete(measUuid: string): Promise<void> {
    await this.call("PUT", `/measurements/${measUuid}/complete`);
  }

  private async call(
    method: string,
    path: string,
    body?: string | Uint8Array,
    type?: string,
    okAlso: number[] = [],
  ): Promise<Response> {
    const url = this.base + path;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${tokenOf(this.session)}`,
          accept: "application/json",
          ...(type ? { "content-type": type } : {}),
        },
        body: body as BodyInit | undefined,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (e) {
      throw new RestError(0, `cannot reach ${url}: ${errorMessage((e as Error).cause ?? e)}`);
    }
    if (!res.ok && !okAlso.includes(res.status)) {
      throw new RestError(res.status, `${method} ${path} failed (${res.status}): ${await readError(res)}`);
    }
    return res;
  }
}
