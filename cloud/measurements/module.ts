// The measurements area: persisted iSCP data and the measurement REST API (the intdash REST API's measurement operations).
import path from "node:path";
import type { CloudModule } from "../module.js";
import { openCommitTrace } from "./ingest/commit-trace.js";
import { MeasurementsService } from "./service/measurements-service.js";
import { PayloadFiles } from "./storage/payload-files.js";
import { migrations } from "./repo/migrations.js";
import { allSequenceIds } from "./repo/sequences.js";
import { baseTimeRoutes } from "./routes/basetimes.js";
import { dataRoutes } from "./routes/data.js";
import { eventRoutes } from "./routes/events.js";
import { markerRoutes } from "./routes/markers.js";
import { measurementRoutes } from "./routes/measurements.js";
import { sequenceRoutes } from "./routes/sequences.js";
import { seriesRoutes } from "./routes/series.js";
import { versionRoute } from "./routes/version.js";

export const measurementsModule: CloudModule = {
  name: "measurements",
  migrations,
  routes: [...measurementRoutes, ...sequenceRoutes, ...baseTimeRoutes, ...markerRoutes, ...dataRoutes, ...seriesRoutes, ...eventRoutes, versionRoute],
  async init(svc) {
    // On PostgreSQL every payload stays in its row (bytea), so that every instance reads it (docs/decisions.md).
    const files = await PayloadFiles.open(path.join(svc.config.dataDir, "chunks"), svc.db.dialect === "postgres" ? { inlineMax: Infinity } : {});
    // Files of sequences deleted just before a crash (nothing writes yet: the server is not listening).
    const swept = await files.sweep(await allSequenceIds(svc.db));
    if (swept.length > 0) svc.log.info({ sequences: swept }, "removed payload files of deleted sequences");
    const commitTrace = svc.config.commitTrace ? await openCommitTrace(svc.config.commitTrace) : undefined;
    const commits = {
      committed: (chunks: number, points: number, seconds: number) => {
        svc.storageRoom.noteStored();
        svc.metrics.stored(chunks, points, seconds);
      },
    };
    svc.measurements = new MeasurementsService(svc.db, svc.log, files, { commitTrace, commits });
    svc.onClose.push(() => svc.measurements.close());
    if (commitTrace) svc.onClose.push(() => commitTrace.close());
  },
  attach(server, svc) {
    // server.close() waits for every open connection; event streams never end by themselves,
    // so they are ended when the server starts closing.
    const close = server.close.bind(server);
    server.close = ((cb?: (err?: Error) => void) => {
      svc.measurements.events.shutdownSubscribers();
      return close(cb);
    }) as typeof server.close;
  },
};
