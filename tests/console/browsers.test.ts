// The console's main flow in both browsers a user may bring: Debian's chromium (CDP) and firefox-esr
// (WebDriver BiDi): sign in through the sign-in page, the running measurement listed, its plot drawn,
// sign out.
import { describe, it } from "vitest";
import { BROWSERS, launchBrowser } from "../support/browser.js";
import { ADMIN_PASSWORD } from "../cloud/oauth/helpers.js";
import { signIn, withRunningSampleStack } from "./helpers.js";
import { expectListed, expectPlotted, expectSignedOut, nextRefreshToken } from "./main-flow.js";

describe("web console in each browser", () => {
  const ctx = withRunningSampleStack();

  for (const name of BROWSERS) {
    it(`signs in, lists and plots the running measurement, and signs out in ${name}`, async () => {
      const browser = await launchBrowser(name, { viewport: { width: 1280, height: 900 } });
      try {
        const page = await browser.context.newPage();
        const refresh = nextRefreshToken(page);
        const { s, measurement } = ctx;
        await signIn(page, s.peer.url, "admin", ADMIN_PASSWORD);
        await expectListed(page, s, measurement);
        await expectPlotted(page, s, measurement);
        await expectSignedOut(page, s, await refresh);
      } finally {
        await browser.close();
      }
    }, 240_000);
  }
});
