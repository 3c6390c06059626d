// A certificate pasted into a form body arrives with each '+' decoded to a space; one whose base64
// ends in '+' (about one in 190 certificates) must still be read, its last character included.
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { parseCertificate, subjectOf } from "../../../cloud/oauth/clients/tls-dn.js";

const pem = fs.readFileSync(new URL("./fixtures/cert-ending-in-plus.pem", import.meta.url), "utf8");

describe("reading a client certificate", () => {
  it("reads a form-decoded certificate whose base64 ends in '+'", () => {
    const base64 = pem.replace(/-----[A-Z ]+-----/g, "").replace(/\s/g, "");
    expect(base64.endsWith("+")).toBe(true);
    const formDecoded = pem.replace(/\+/g, " ");
    for (const text of [pem, formDecoded, base64, base64.replace(/\+/g, " ")]) {
      const cert = parseCertificate(text);
      expect(cert && subjectOf(cert)).toBe("CN=plus-edge\nO=fixture");
    }
  });
});
