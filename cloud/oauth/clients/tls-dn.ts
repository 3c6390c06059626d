// tls_client_auth (RFC 8705 2.1.2): the client certificate's subject DN must equal the registered one.
// DNs are compared as sets of attribute=value pairs, so "CN=a,O=b" (RFC 4514 order) equals node's
// "O=b\nCN=a" rendering of the same subject.
import crypto from "node:crypto";

export function normaliseDn(dn: string): string[] {
  // Split on commas/newlines not escaped with a backslash.
  const parts = dn
    .split(/(?<!\\)[,\n+]/)
    .map((p) => p.trim())
    .filter(Boolean);
  return parts
    .map((p) => {
      const i = p.indexOf("=");
      if (i < 0) return p.toLowerCase();
      return `${p.slice(0, i).trim().toUpperCase()}=${p.slice(i + 1).trim()}`;
    })
    .sort();
}

export const sameDn = (a: string, b: string): boolean => {
  const na = normaliseDn(a);
  const nb = normaliseDn(b);
  return na.length > 0 && na.length === nb.length && na.every((v, i) => v === nb[i]);
};

/** Parses PEM (possibly URL-decoded with spaces for '+') or base64 DER; undefined when unreadable. */
export function parseCertificate(text: string): crypto.X509Certificate | undefined {
  try {
    // Line breaks are layout; a space can only be a '+' that arrived form-decoded, the last character included
    // (DER's base64 starts with "MII", so only leading spaces are layout).
    const t = text
      .replace(/-----(BEGIN|END) CERTIFICATE-----/g, "")
      .replace(/[\r\n\t]/g, "")
      .trimStart()
      .replace(/ /g, "+");
    return new crypto.X509Certificate(Buffer.from(t, "base64"));
  } catch {
    return undefined;
  }
}

/** The subject DN of a currently valid certificate, else undefined. */
export function subjectOf(cert: crypto.X509Certificate, now = new Date()): string | undefined {
  if (new Date(cert.validFrom) > now || new Date(cert.validTo) < now) return undefined;
  return cert.subject;
}
