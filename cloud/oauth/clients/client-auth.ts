// Client authentication at the token and revocation endpoints, by the client's registered
// token_endpoint_auth_method (RFC 6749 2.3, RFC 8705 2). Exactly one method per request.
import type { TLSSocket } from "node:tls";
import type { IncomingMessage } from "node:http";
import { invalidClient, invalidRequest } from "../service/oauth-errors.js";
import type { OAuthClient } from "./model.js";
import { parseCertificate, sameDn, subjectOf } from "./tls-dn.js";

export interface ClientCredentials {
  clientId?: string;
  secret?: string;
  via: "basic" | "post" | "none";
}

/** Reads credentials from `Authorization: Basic` (form-urlencoded id and secret) or the form body. */
export function readClientCredentials(req: IncomingMessage, form: Record<string, string>): ClientCredentials {
  const auth = req.headers.authorization ?? "";
  const basic = /^basic\s+(.+)$/i.exec(auth);
  if (basic) {
    if (form.client_secret !== undefined) throw invalidRequest("client authentication must use only one method");
    const decoded = Buffer.from(basic[1]!, "base64").toString("utf8");
    const i = decoded.indexOf(":");
    if (i < 0) throw invalidClient("malformed HTTP Basic credentials", true);
    let id: string;
    let secret: string;
    try {
      id = decodeURIComponent(decoded.slice(0, i).replace(/\+/g, " "));
      secret = decodeURIComponent(decoded.slice(i + 1).replace(/\+/g, " "));
    } catch {
      throw invalidClient("malformed HTTP Basic credentials", true);
    }
    if (form.client_id !== undefined && form.client_id !== id)
      throw invalidRequest("client_id differs from the HTTP Basic user");
    return { clientId: id, secret, via: "basic" };
  }
  if (form.client_secret !== undefined) return { clientId: form.client_id, secret: form.client_secret, via: "post" };
  return { clientId: form.client_id, via: "none" };
}

/**
 * The subject DN of the client certificate. When this peer terminates TLS itself, only the certificate
 * verified on the connection counts: a certificate is public, so one pasted into `client_certification`
 * proves nothing. Over plain HTTP the field is used (filled in by a TLS-terminating proxy).
 */
function presentedSubjectDn(req: IncomingMessage, form: Record<string, string>): string | undefined {
  const socket = req.socket as Partial<TLSSocket>;
  if (socket.encrypted) {
    const peer = socket.authorized ? socket.getPeerX509Certificate?.() : undefined;
    return peer && subjectOf(peer);
  }
  if (form.client_certification) {
    const cert = parseCertificate(form.client_certification);
    return cert && subjectOf(cert);
  }
  return undefined;
}

export async function authenticateClient(
  req: IncomingMessage,
  form: Record<string, string>,
  creds: ClientCredentials,
  resolve: (clientId: string) => Promise<OAuthClient | undefined>,
): Promise<OAuthClient> {
  const basic = creds.via === "basic";
  if (!creds.clientId) throw invalidClient("client_id is required", basic);
  const client = await resolve(creds.clientId);
  if (!client) throw invalidClient("unknown client or wrong credentials", basic);
  switch (client.tokenEndpointAuthMethod) {
    case "client_secret_basic":
    case "client_secret_post": {
      const expected = client.tokenEndpointAuthMethod === "client_secret_basic" ? "basic" : "post";
      if (creds.via !== expected || creds.secret === undefined)
        throw invalidClient(`this client authenticates with ${client.tokenEndpointAuthMethod}`, basic);
      if (!(await client.verifySecret(creds.secret))) throw invalidClient("unknown client or wrong credentials", basic);
      return client;
    }
    case "none":
      if (creds.via !== "none") throw invalidClient("a public client must not send a client secret", basic);
      return client;
    case "tls_client_auth": {
      const dn = presentedSubjectDn(req, form);
      if (!dn || !client.tlsClientAuthSubjectDn || !sameDn(dn, client.tlsClientAuthSubjectDn))
        throw invalidClient("client certificate missing, expired or with another subject", basic);
      return client;
    }
  }
}
