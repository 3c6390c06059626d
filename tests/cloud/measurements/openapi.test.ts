// The measurement operations appear in the OpenAPI document with the intdash REST API's operationIds,
// methods, paths and success statuses, in project and legacy form.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestPeer, type TestPeer } from "../harness.js";

const PROJECT = "/v1/projects/{project_uuid}";
const M = "/measurements/{measurement_uuid}";

// [project operationId, legacy operationId | "", method, path after the prefix, success]
const OPS: Array<[string, string, string, string, string]> = [
  ["createProjectMeasurement", "createMeasurement", "post", "/measurements", "201"],
  ["createProjectMeasurementWithUUID", "createMeasurementWithUUID", "post", M, "201"],
  ["listProjectMeasurements", "listMeasurements", "get", "/measurements", "200"],
  ["getProjectMeasurement", "getMeasurement", "get", M, "200"],
  ["updateProjectMeasurement", "updateMeasurement", "put", M, "204"],
  ["deleteProjectMeasurement", "deleteMeasurement", "delete", M, "204"],
  ["endProjectMeasurement", "endMeasurement", "put", `${M}/end`, "200"],
  ["completeProjectMeasurement", "completeMeasurement", "put", `${M}/complete`, "200"],
  ["protectProjectMeasurement", "protectMeasurement", "put", `${M}/protected`, "204"],
  ["unprotectProjectMeasurement", "unprotectMeasurement", "delete", `${M}/protected`, "204"],
  ["listProjectMeasurementSequences", "listMeasurementSequences", "get", `${M}/sequences`, "200"],
  ["getProjectMeasurementSequence", "getMeasurementSequence", "get", `${M}/sequences/{sequences_uuid}`, "200"],
  ["replaceProjectMeasurementSequence", "replaceMeasurementSequence", "put", `${M}/sequences/{sequences_uuid}`, "200"],
  ["updateProjectMeasurementSequence", "updateMeasurementSequence", "patch", `${M}/sequences/{sequences_uuid}`, "200"],
  [
    "createProjectMeasurementSequenceChunks",
    "createMeasurementSequenceChunks",
    "post",
    "/measurements/sequences/chunks",
    "200",
  ],
  ["listProjectDataPoints", "listDataPoints", "get", "/data", "200"],
  ["listProjectMeasurementBaseTimes", "listMeasurementBaseTimes", "get", `${M}/basetimes`, "200"],
  ["createProjectMeasurementBaseTime", "", "post", `${M}/basetimes`, "201"],
  ["getProjectMeasurementBaseTime", "getMeasurementBaseTime", "get", `${M}/basetimes/{type}`, "200"],
  ["updateProjectMeasurementBaseTime", "updateMeasurementBaseTime", "put", `${M}/basetimes/{type}`, "200"],
  ["updateProjectMeasurementBaseTimeByID", "", "patch", `${M}/basetimes/{type}`, "200"],
  ["deleteProjectMeasurementBaseTime", "deleteMeasurementBaseTime", "delete", `${M}/basetimes/{type}`, "204"],
  ["createProjectMeasurementMarker", "createMeasurementMarker", "post", `${M}/markers`, "201"],
  [
    "getProjectMeasurementMarkersWithMeasurementUUID",
    "getMeasurementMarkersWithMeasurementUUID",
    "get",
    `${M}/markers`,
    "200",
  ],
  ["deleteProjectMeasurementMarkers", "deleteMeasurementMarkers", "delete", `${M}/markers`, "204"],
  [
    "getProjectMeasurementMarkerWithMeasurementUUIDAndMarkerUUID",
    "getMeasurementMarkerWithMeasurementUUIDAndMarkerUUID",
    "get",
    `${M}/markers/{measurement_marker_uuid}`,
    "200",
  ],
  [
    "updateProjectMeasurementMarkerWithMeasurementUUIDAndMarkerUUID",
    "updateMeasurementMarkerWithMeasurementUUIDAndMarkerUUID",
    "put",
    `${M}/markers/{measurement_marker_uuid}`,
    "200",
  ],
  [
    "deleteProjectMeasurementMarkerWithMeasurementUUIDAndMarkerUUID",
    "deleteMeasurementMarkerWithMeasurementUUIDAndMarkerUUID",
    "delete",
    `${M}/markers/{measurement_marker_uuid}`,
    "204",
  ],
  ["listProjectMeasurementMarkers", "listMeasurementMarkers", "get", "/measurements/markers", "200"],
  [
    "getProjectMeasurementMarker",
    "getMeasurementMarker",
    "get",
    "/measurements/markers/{measurement_marker_uuid}",
    "200",
  ],
  [
    "updateProjectMeasurementMarker",
    "updateMeasurementMarker",
    "put",
    "/measurements/markers/{measurement_marker_uuid}",
    "200",
  ],
  [
    "deleteProjectMeasurementMarker",
    "deleteMeasurementMarker",
    "delete",
    "/measurements/markers/{measurement_marker_uuid}",
    "204",
  ],
];

describe("measurements: OpenAPI", () => {
  let peer: TestPeer;
  beforeAll(async () => {
    peer = await startTestPeer();
  });
  afterAll(async () => {
    await peer.stop();
  });

  it("lists every operation with its id, method, path and success status", async () => {
    const doc: any = await (await peer.api("/openapi.json")).json();
    for (const [projectOp, legacyOp, method, path, success] of OPS) {
      const p = doc.paths[`${PROJECT}${path}`]?.[method];
      expect(p?.operationId, `${method} ${PROJECT}${path}`).toBe(projectOp);
      expect(Object.keys(p.responses)).toContain(success);
      if (legacyOp) {
        const l = doc.paths[`/v1${path}`]?.[method];
        expect(l?.operationId, `${method} /v1${path}`).toBe(legacyOp);
        expect(Object.keys(l.responses)).toContain(success);
      }
    }
    const chunks = doc.paths[`${PROJECT}/measurements/sequences/chunks`].post.requestBody.content;
    expect(Object.keys(chunks)).toEqual(["application/vnd.iscp.v2.protobuf", "application/json"]);
  });

  it("serves getVersion at GET /v1/version without credentials", async () => {
    const doc: any = await (await peer.api("/openapi.json")).json();
    expect(doc.paths["/v1/version"]?.get?.operationId).toBe("getVersion");
    const res = await peer.api("/v1/version");
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
      cloud_peer_version: expect.stringMatching(/^\d+\.\d+\.\d+/),
    });
  });
});
