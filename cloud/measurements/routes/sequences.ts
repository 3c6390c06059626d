// Sequences (one per upstream stream) and the chunk upload that fills them.
import * as Schema from "effect/Schema";
import { Invalid } from "../../errors.js";
import { ApiError } from "../../http/api-error.js";
import { decodeStoreDataChunksJson, decodeStoreDataChunksProto } from "../formats/codec.js";
import { dual } from "./dual-route.js";
import {
  ChunksResult,
  MeasParams,
  SeqParams,
  SequenceReplace,
  SequenceResponse,
  SequencesResponse,
} from "../schemas.js";

/** Chunk uploads may be large (the SDKs batch about 1 MB of chunks). */
export const CHUNK_BODY_LIMIT = 16 * 1024 * 1024;

const PROTOBUF_TYPES = [
  "application/vnd.iscp.v2.protobuf",
  "application/protobuf",
  "application/x-protobuf",
  "application/octet-stream",
];

function parseJson(raw: Buffer): unknown {
  try {
    return JSON.parse(raw.toString("utf8"));
  } catch {
    throw new Invalid("request body is not valid JSON");
  }
}

export const sequenceRoutes = [
  ...dual({
    projectOp: "listProjectMeasurementSequences",
    legacyOp: "listMeasurementSequences",
    method: "GET",
    path: "/measurements/{measurement_uuid}/sequences",
    params: MeasParams,
    success: 200,
    response: SequencesResponse,
    errors: [404],
    handler: ({ project, params }, svc) => svc.measurements.sequences.list(project, params.measurement_uuid),
  }),
  ...dual({
    projectOp: "getProjectMeasurementSequence",
    legacyOp: "getMeasurementSequence",
    method: "GET",
    path: "/measurements/{measurement_uuid}/sequences/{sequences_uuid}",
    params: SeqParams,
    success: 200,
    response: SequenceResponse,
    errors: [404],
    handler: ({ project, params }, svc) =>
      svc.measurements.sequences.get(project, params.measurement_uuid, params.sequences_uuid),
  }),
  ...dual({
    projectOp: "replaceProjectMeasurementSequence",
    legacyOp: "replaceMeasurementSequence",
    method: "PUT",
    path: "/measurements/{measurement_uuid}/sequences/{sequences_uuid}",
    params: SeqParams,
    body: SequenceReplace,
    success: 200,
    response: SequenceResponse,
    errors: [404],
    handler: ({ project, params, body }, svc) =>
      svc.measurements.sequences.write(project, params.measurement_uuid, params.sequences_uuid, body, "replace"),
  }),
  ...dual({
    projectOp: "updateProjectMeasurementSequence",
    legacyOp: "updateMeasurementSequence",
    method: "PATCH",
    path: "/measurements/{measurement_uuid}/sequences/{sequences_uuid}",
    params: SeqParams,
    body: SequenceReplace,
    success: 200,
    response: SequenceResponse,
    errors: [404],
    handler: ({ project, params, body }, svc) =>
      svc.measurements.sequences.write(project, params.measurement_uuid, params.sequences_uuid, body, "patch"),
  }),
  ...dual({
    projectOp: "createProjectMeasurementSequenceChunks",
    legacyOp: "createMeasurementSequenceChunks",
    method: "POST",
    path: "/measurements/sequences/chunks",
    summary: "Store chunks of a sequence (protobuf StoreDataChunks or its JSON form); per chunk ok or skipped",
    // Read raw: the media type decides how it is decoded.
    body: Schema.Unknown,
    bodyKind: "raw",
    bodyLimit: CHUNK_BODY_LIMIT,
    bodyMediaTypes: ["application/vnd.iscp.v2.protobuf", "application/json"],
    success: 200,
    response: ChunksResult,
    errors: [404, 413, 415],
    handler: async ({ project, ctx, body }, svc) => {
      const raw = body as Buffer;
      const type = (ctx.get("content-type").split(";")[0] ?? "").trim().toLowerCase();
      let upload;
      if (PROTOBUF_TYPES.includes(type)) upload = decodeStoreDataChunksProto(raw);
      else if (type === "application/json" || type.endsWith("+json"))
        upload = decodeStoreDataChunksJson(parseJson(raw));
      else
        throw new ApiError(
          415,
          "unsupported_media_type",
          "send application/vnd.iscp.v2.protobuf (StoreDataChunks) or application/json",
        );
      return svc.measurements.sequences.storeChunks(project, upload);
    },
  }),
];
