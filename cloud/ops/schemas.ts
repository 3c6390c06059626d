// The operations area's responses: what the readiness probe reports per part.
import * as Schema from "effect/Schema";

export const Checks = Schema.Struct({
  database: Schema.String,
  broker: Schema.String,
  storage: Schema.String,
  cluster: Schema.String,
});
