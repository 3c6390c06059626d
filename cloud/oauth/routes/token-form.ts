// The token endpoint's one form reader, used by its route and its fast path alike: form bodies only
// (RFC 6749 3.2; JSON is refused rather than half-understood), at most FORM_LIMIT bytes, and no
// parameter sent twice (RFC 6749 3.1 and 3.2: "parameters MUST NOT be included more than once").
import type { IncomingMessage } from "node:http";
import { readRaw } from "../../../lib/http/body.js";
import { invalidRequest } from "../service/oauth-errors.js";

export const FORM_TYPE = "application/x-www-form-urlencoded";
export const FORM_LIMIT = 64 * 1024;
export const mediaType = (contentType: string | undefined) => (contentType ?? "").split(";")[0]!.trim().toLowerCase();

/** The form's fields; throws invalid_request for another media type or a repeated parameter. */
export async function readTokenForm(req: IncomingMessage): Promise<Record<string, string>> {
  if (mediaType(req.headers["content-type"]) !== FORM_TYPE) {
    req.resume();
    throw invalidRequest("the body must be application/x-www-form-urlencoded");
  }
  const form: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams((await readRaw(req, FORM_LIMIT)).toString("utf8"))) {
    if (Object.hasOwn(form, k)) throw invalidRequest(`parameter ${k} is repeated`);
    form[k] = v;
  }
  return form;
}
