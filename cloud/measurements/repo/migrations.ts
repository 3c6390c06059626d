// Measurement storage schema (versions 400-449 of the iSCP/measurements range).
// Times are epoch nanoseconds split into whole seconds + nanos (sqlite3 hands integers to JS as
// doubles, exact only to 2^53); elapsed times are nanoseconds, exact for about 104 days.
import type { Migration } from "../../database/migrate.js";

export const migrations: Migration[] = [
  {
    version: 400,
    name: "measurements, base times, sequences, chunks",
    up: `
CREATE TABLE meas_measurements (
  uuid TEXT PRIMARY KEY,
  project_uuid TEXT NOT NULL,
  name TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  edge_uuid TEXT NOT NULL,
  protected INTEGER NOT NULL DEFAULT 0,
  ended INTEGER NOT NULL DEFAULT 0,
  completed INTEGER NOT NULL DEFAULT 0,
  status TEXT NOT NULL DEFAULT 'ready',
  basetime_id INTEGER,
  basetime_type TEXT NOT NULL DEFAULT 'undefined',
  basetime_s INTEGER NOT NULL DEFAULT 0,
  basetime_nanos INTEGER NOT NULL DEFAULT 0,
  max_elapsed_ns INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL
);
CREATE INDEX meas_measurements_project ON meas_measurements (project_uuid, basetime_s, basetime_nanos);
CREATE INDEX meas_measurements_edge ON meas_measurements (edge_uuid);

CREATE TABLE meas_basetimes (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  measurement_uuid TEXT NOT NULL REFERENCES meas_measurements (uuid) ON DELETE CASCADE,
  type TEXT NOT NULL,
  name TEXT NOT NULL,
  priority INTEGER NOT NULL,
  basetime_s INTEGER NOT NULL,
  basetime_nanos INTEGER NOT NULL,
  elapsed_time_ns INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (measurement_uuid, name)
);

CREATE TABLE meas_sequences (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  measurement_uuid TEXT NOT NULL REFERENCES meas_measurements (uuid) ON DELETE CASCADE,
  uuid TEXT NOT NULL,
  expected_data_points INTEGER,
  final_sequence_number INTEGER,
  received_data_points INTEGER NOT NULL DEFAULT 0,
  received_chunks_count INTEGER NOT NULL DEFAULT 0,
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (measurement_uuid, uuid)
);

CREATE TABLE meas_chunks (
  measurement_uuid TEXT NOT NULL,
  sequence_id INTEGER NOT NULL REFERENCES meas_sequences (id) ON DELETE CASCADE,
  sequence_number INTEGER NOT NULL,
  data_points INTEGER NOT NULL,
  min_elapsed_ns INTEGER NOT NULL,
  max_elapsed_ns INTEGER NOT NULL,
  payload BLOB NOT NULL,
  created_at_ms INTEGER NOT NULL,
  PRIMARY KEY (sequence_id, sequence_number)
) WITHOUT ROWID;
-- Data reads walk a measurement's chunks in time order (keyset paging) in either direction.
CREATE INDEX meas_chunks_asc ON meas_chunks (measurement_uuid, min_elapsed_ns, sequence_id, sequence_number);
CREATE INDEX meas_chunks_desc ON meas_chunks (measurement_uuid, max_elapsed_ns, sequence_id, sequence_number);
`,
  },
  {
    version: 401,
    name: "data IDs seen per measurement",
    up: `
CREATE TABLE meas_data_ids (
  measurement_uuid TEXT NOT NULL REFERENCES meas_measurements (uuid) ON DELETE CASCADE,
  data_type TEXT NOT NULL,
  data_name TEXT NOT NULL,
  PRIMARY KEY (measurement_uuid, data_type, data_name)
) WITHOUT ROWID;
`,
  },
  {
    version: 402,
    name: "chunk payloads in their own rowid table",
    // Large blobs in a WITHOUT ROWID table slow every lookup and insert in it (SQLite keeps whole records in
    // its b-tree cells): the chunk rows stay small and keyed, the payloads live in a plain rowid table.
    up: `
CREATE TABLE meas_chunk_payloads (
  sequence_id INTEGER NOT NULL,
  sequence_number INTEGER NOT NULL,
  payload BLOB NOT NULL,
  FOREIGN KEY (sequence_id, sequence_number) REFERENCES meas_chunks (sequence_id, sequence_number) ON DELETE CASCADE
);
CREATE UNIQUE INDEX meas_chunk_payloads_key ON meas_chunk_payloads (sequence_id, sequence_number);
INSERT INTO meas_chunk_payloads (sequence_id, sequence_number, payload) SELECT sequence_id, sequence_number, payload FROM meas_chunks;
ALTER TABLE meas_chunks DROP COLUMN payload;
`,
  },
  {
    version: 403,
    name: "chunk payloads in files beside the database",
    // Payloads now live in one append-only file per sequence (payload-files.ts); a row holds where. Rows
    // written before keep their blob (file_length NULL); new rows hold an empty blob.
    up: `
ALTER TABLE meas_chunk_payloads ADD COLUMN file_offset INTEGER;
ALTER TABLE meas_chunk_payloads ADD COLUMN file_length INTEGER;
`,
  },
  {
    version: 404,
    name: "chunk log: real-time chunks appended in commit order",
    // The shared group commit (ingest/shared-commit.ts) appends every stream's chunks here: rows in commit order
    // (appends to the table's last page) and one small unique index, instead of a page per stream in each of
    // meas_chunks' indexes per commit. A compaction (repo/chunk-log.ts) moves the rows into meas_chunks and
    // meas_chunk_payloads in key order every fraction of a second; readers read both until then.
    up: `
CREATE TABLE meas_chunk_log (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  measurement_uuid TEXT NOT NULL,
  sequence_id INTEGER NOT NULL REFERENCES meas_sequences (id) ON DELETE CASCADE,
  sequence_number INTEGER NOT NULL,
  data_points INTEGER NOT NULL,
  min_elapsed_ns INTEGER NOT NULL,
  max_elapsed_ns INTEGER NOT NULL,
  created_at_ms INTEGER NOT NULL,
  payload BLOB NOT NULL,
  file_offset INTEGER,
  file_length INTEGER
);
CREATE UNIQUE INDEX meas_chunk_log_key ON meas_chunk_log (sequence_id, sequence_number);
`,
  },
  {
    version: 405,
    name: "chunk packs: a compaction stores a stream's consecutive chunks as one row",
    // A compaction (repo/chunk-log.ts) stores a run of one sequence's consecutive numbers whose payloads are in
    // their rows as one pack: one meas_chunks row keyed by the first number (last_number the last, min/max
    // elapsed over the run) and one meas_chunk_payloads row holding the payloads one after another and, in
    // chunk_index, a JSON array per chunk [data points, min elapsed, max elapsed, created at ms, payload length].
    // Rows written before (last_number NULL) are packs of one chunk, as are chunks whose payload is in a file.
    up: `
ALTER TABLE meas_chunks ADD COLUMN last_number INTEGER;
ALTER TABLE meas_chunk_payloads ADD COLUMN chunk_index TEXT;
`,
  },
  {
    version: 430,
    name: "measurement markers",
    // Elapsed times in microseconds after the measurement's base time, as the API gives them; a point
    // marker has occurred_us, a range marker start_us and end_us. tag is a JSON object of strings.
    up: `
CREATE TABLE meas_markers (
  uuid TEXT PRIMARY KEY,
  measurement_uuid TEXT NOT NULL REFERENCES meas_measurements (uuid) ON DELETE CASCADE,
  type TEXT NOT NULL,
  name TEXT NOT NULL DEFAULT '',
  description TEXT NOT NULL DEFAULT '',
  tag TEXT NOT NULL DEFAULT '{}',
  occurred_us INTEGER,
  start_us INTEGER,
  end_us INTEGER,
  created_at TEXT NOT NULL,
  created_by TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  updated_by TEXT NOT NULL
);
CREATE INDEX meas_markers_measurement ON meas_markers (measurement_uuid);
`,
  },
];
