// Debian's browsers driven by playwright-core, headless, on a fresh temp profile (removed at close):
// chromium over CDP, and firefox-esr over WebDriver BiDi (through firefox-bidi-shim.mjs, see there).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium, firefox, type BrowserContext } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const FIREFOX = "/usr/bin/firefox-esr";
const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];
const SHIM = path.join(import.meta.dirname, "firefox-bidi-shim.mjs");
/** Firefox asks no one outside this machine for updates, experiments or safe-browsing lists. */
const FIREFOX_PREFS = {
  "app.update.enabled": false,
  "app.normandy.enabled": false,
  "browser.safebrowsing.malware.enabled": false,
  "browser.safebrowsing.phishing.enabled": false,
  "datareporting.policy.dataSubmissionEnabled": false,
  "messaging-system.rsexperimentloader.enabled": false,
  "network.captive-portal-service.enabled": false,
  "network.connectivity-service.enabled": false,
};

export type BrowserName = "chromium" | "firefox";
export const BROWSERS: readonly BrowserName[] = ["chromium", "firefox"];

export interface TestBrowser {
  name: BrowserName;
  context: BrowserContext;
  close(): Promise<void>;
}

export interface LaunchOptions {
  viewport?: { width: number; height: number };
}

export function launchBrowser(name: BrowserName, opts: LaunchOptions = {}): Promise<TestBrowser> {
  return name === "firefox" ? launchFirefox(opts) : launchChromium(opts);
}

export async function launchChromium(opts: LaunchOptions = {}): Promise<TestBrowser> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "chromium-profile-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    ...(opts.viewport ? { viewport: opts.viewport } : {}),
  });
  return closing("chromium", context, [profile]);
}

export async function launchFirefox(opts: LaunchOptions = {}): Promise<TestBrowser> {
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "firefox-profile-"));
  // playwright-core starts an executable with Firefox's arguments: a small script that runs the shim.
  const bin = fs.mkdtempSync(path.join(os.tmpdir(), "firefox-shim-"));
  const launcher = path.join(bin, "firefox");
  fs.writeFileSync(launcher, `#!/bin/sh\nexec '${process.execPath}' '${SHIM}' '${FIREFOX}' "$@"\n`, { mode: 0o755 });
  try {
    const context = await firefox.launchPersistentContext(profile, {
      channel: "moz-firefox",
      executablePath: launcher,
      headless: true,
      firefoxUserPrefs: FIREFOX_PREFS,
      ...(opts.viewport ? { viewport: opts.viewport } : {}),
    });
    return closing("firefox", context, [profile, bin]);
  } catch (e) {
    for (const d of [profile, bin]) fs.rmSync(d, { recursive: true, force: true });
    throw e;
  }
}

function closing(name: BrowserName, context: BrowserContext, dirs: string[]): TestBrowser {
  return {
    name,
    context,
    async close() {
      await context.close().catch(() => undefined);
      for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
    },
  };
}
