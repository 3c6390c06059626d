// The operations area's responses: what the readiness probe reports per part.
import { Schema } from "effect";

export const Checks = Schema.Struct({
  database: Schema.String,
  broker: Schema.String,
  storage: Schema.String,
  cluster: Schema.String,
});
