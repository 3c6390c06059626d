// Outgoing mail: SMTP through nodemailer when CLOUD_SMTP_URL is set, otherwise each message is
// written as an .eml file under <data>/outbox/ (the embedded default).
import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import nodemailer from "nodemailer";
import type { Logger } from "pino";

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
}

export interface Mailer {
  /** Sends one message; resolves once it is handed to SMTP or written to the outbox. */
  send(msg: MailMessage): Promise<void>;
  close(): void;
}

export function createMailer(opts: { smtpUrl?: string; from: string; dataDir: string; log: Logger }): Mailer {
  if (opts.smtpUrl) {
    // Bounded waits: a dead SMTP server must not hold a request for minutes.
    const transport = nodemailer.createTransport({
      url: opts.smtpUrl,
      connectionTimeout: 10_000,
      greetingTimeout: 10_000,
      socketTimeout: 30_000,
    } as never);
    return {
      async send(msg) {
        await transport.sendMail({ from: opts.from, ...msg });
        opts.log.info({ subject: msg.subject }, "mail sent");
      },
      close: () => transport.close(),
    };
  }
  const outbox = path.join(opts.dataDir, "outbox");
  const composer = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: "unix" });
  return {
    async send(msg) {
      const info = await composer.sendMail({ from: opts.from, ...msg });
      fs.mkdirSync(outbox, { recursive: true, mode: 0o700 });
      const file = path.join(
        outbox,
        `${new Date().toISOString().replace(/[:.]/g, "-")}-${crypto.randomBytes(4).toString("hex")}.eml`,
      );
      fs.writeFileSync(file, info.message as Buffer, { mode: 0o600 });
      opts.log.info({ subject: msg.subject, file: path.basename(file) }, "mail written to outbox");
    },
    close: () => undefined,
  };
}
