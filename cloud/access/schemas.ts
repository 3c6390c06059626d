// The access area's requests and responses (intdash REST API: checkHTTPAuthorization, checkMeHTTPAuthorization).
import * as Schema from "effect/Schema";

const Method = Schema.Literal("GET", "POST", "PUT", "PATCH", "DELETE");
const Path = Schema.String.pipe(Schema.minLength(1), Schema.maxLength(4096));
export const CheckHTTPAuthorizationRequest = Schema.Struct({
  subject: Schema.optional(Schema.String.pipe(Schema.maxLength(64))),
  scopes: Schema.Array(Schema.String.pipe(Schema.maxLength(256))).pipe(Schema.maxItems(256)),
  path: Path,
  method: Method,
});
export const CheckMeHTTPAuthorizationRequest = Schema.Struct({ path: Path, method: Method });
export const CheckAuthorizationResponse = Schema.Struct({ result: Schema.Boolean });
