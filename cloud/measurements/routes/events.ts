// GET /v1/projects/{p}/measurements/events: a long-lived stream of `measurement_updated`
// DomainEventProto events of the project. NDJSON (proto3 JSON form) by default, or with
// `Accept: application/protobuf` 8-byte little-endian length-prefixed DomainEventProto frames.
// Empty lines (NDJSON) or zero-length frames (protobuf) are keep-alives, sent at once and every 15 s.
import { Readable } from "node:stream";
import * as Schema from "effect/Schema";
import { reply } from "../../http/route.js";
import { encodeDomainEvent, frame } from "../formats/codec.js";
import type { MeasurementEvent } from "../service/events.js";
import { dual } from "./dual-route.js";
import { wantsProtobuf } from "./data.js";
import { Uuid } from "../schemas.js";
import { formatNs } from "../formats/time.js";

export const KEEPALIVE_MS = 15_000;
/** A subscriber that lets this much pile up unread is disconnected rather than buffered without bound. */
export const SUBSCRIBER_BUFFER_BYTES = 1024 * 1024;

const EventsQuery = Schema.Struct({ meas_uuid: Schema.optional(Uuid) });

export const jsonEvent = (e: MeasurementEvent) =>
  `${JSON.stringify({ measUuid: e.measUuid, occurredAt: formatNs(e.occurredAtNs), measurementUpdated: {} })}\n`;

export const eventRoutes = [
  ...dual({
    projectOp: "streamProjectMeasurementEvents",
    legacyOp: "streamMeasurementEvents",
    method: "GET",
    path: "/measurements/events",
    summary: "Stream measurement_updated events (DomainEventProto) of the project's measurements",
    query: EventsQuery,
    success: 200,
    responseMediaType: "application/json; charset=utf-8",
    handler: ({ project, query, ctx }, svc) => {
      const protobuf = wantsProtobuf(ctx.get("accept"));
      const keepalive = protobuf ? Buffer.alloc(8) : Buffer.from("\n");
      const only = query.meas_uuid?.toLowerCase();
      let unsubscribe = () => {};
      let offShutdown = () => {};
      let timer: NodeJS.Timeout | undefined;
      const stream = new Readable({
        read() {},
        destroy(err, cb) {
          unsubscribe();
          offShutdown();
          if (timer) clearInterval(timer);
          cb(err);
        },
      });
      unsubscribe = svc.measurements.events.subscribe((e) => {
        if (e.projectUuid !== project || (only && e.measUuid !== only)) return;
        if (stream.readableLength > SUBSCRIBER_BUFFER_BYTES) return void stream.destroy();
        stream.push(protobuf ? frame(encodeDomainEvent(e.measUuid, e.occurredAtNs)) : Buffer.from(jsonEvent(e)));
      });
      offShutdown = svc.measurements.events.onShutdown(() => {
        unsubscribe();
        offShutdown();
        if (timer) clearInterval(timer);
        stream.push(null);
      });
      timer = setInterval(() => stream.push(keepalive), KEEPALIVE_MS);
      timer.unref();
      stream.push(keepalive);
      ctx.req.once("close", () => stream.destroy());
      return reply(
        200,
        stream,
        { "Cache-Control": "no-store" },
        protobuf ? "application/protobuf" : "application/json; charset=utf-8",
      );
    },
  }),
];
