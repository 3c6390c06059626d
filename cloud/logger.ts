// pino JSON logs. Credentials never reach a log line: request logs (http/access-log.ts) carry method, route
// template, status, duration and the principal's kind and id only (no URL, query string, headers or bodies),
// and the redaction list catches mistakes.
import pino, { type Logger } from "pino";
import { textDestination } from "../lib/log-text.js";

export const REDACT = [
  "password",
  "*.password",
  "token",
  "*.token",
  "secret",
  "*.secret",
  "client_secret",
  "*.client_secret",
  "access_token",
  "refresh_token",
  "*.access_token",
  "*.refresh_token",
  "headers.authorization",
  "headers.cookie",
  'headers["x-intdash-token"]',
  'headers["x-service-token"]',
  'headers["x-edge-token"]',
];

/** `format` text: one readable line a record (lib/log-text.ts), written to `destination` or standard output. */
export function createLogger(level: string, destination?: pino.DestinationStream, format = "json"): Logger {
  const out = format === "text" ? textDestination(destination ?? process.stdout) : destination;
  return pino({ level, redact: { paths: REDACT, censor: "[redacted]" }, base: { svc: "cloud-peer" } }, out);
}
