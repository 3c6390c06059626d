// The measurements area: persisted iSCP data and the measurement REST API (the intdash REST API's measurement operations).
import path from "node:path";
import type { AnyRoute } from "../http/route.js";
import type { ProvidingModule } from "../module-contract.js";
import type { CoreServices, Services } from "../services.js";
import { openCommitTrace } from "./ingest/commit-trace.js";
import { MeasurementsService } from "./service/measurements-service.js";
import { JOURNAL_DIR } from "./storage/journal-files.js";
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

/** A route that first waits for the chunks acknowledged before it to be stored (the ingest journal's apply). */
const afterAcknowledgedChunks = (r: AnyRoute): AnyRoute => ({
  ...r,
  handler: async (req, svc) => {
    await svc.measurements.upstream.settled();
    return r.handler(req, svc);
  },
});

/** What the iSCP broker stores persisted streams with (the broker's IscpHooks over svc.measurements). */
export { measurementHooks } from "./ingest/iscp-hooks.js";

export const measurementsModule: ProvidingModule<CoreServices, Pick<Services, "measurements">> = {
  name: "measurements",
  migrations,
  routes: [
    ...measurementRoutes,
    ...sequenceRoutes,
    ...baseTimeRoutes,
    ...markerRoutes,
    ...dataRoutes,
    ...seriesRoutes,
    ...eventRoutes,
  ]
    .map(afterAcknowledgedChunks)
    .concat(versionRoute),
  async provide(svc) {
    // On PostgreSQL every payload stays in its row (bytea), so that every instance reads it (docs/decisions.md).
    const files = await PayloadFiles.open(
      path.join(svc.config.dataDir, "chunks"),
      svc.db.dialect === "postgres" ? { inlineMax: Infinity } : {},
    );
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
    const measurements = new MeasurementsService(svc.db, svc.log, files, { commitTrace, commits });
    svc.onClose.push(() => measurements.close());
    if (commitTrace) svc.onClose.push(() => commitTrace.close());
    return { measurements };
  },
  // Only a serving peer holds the ingest journal (and applies what a crash left in it): a maintenance command run
  // beside it (token create, keys) must not apply or trim the journal it appends to.
  attach: (_server, svc) =>
    svc.measurements.upstream.openJournal(
      path.join(svc.config.dataDir, JOURNAL_DIR),
      svc.config.durability,
      svc.config.ingestJournal === "on",
    ),
  // server.close() waits for every open connection; event streams never end by themselves,
  // so they are ended when the server starts closing.
  serverClosing: (svc) => svc.measurements.events.shutdownSubscribers(),
};
