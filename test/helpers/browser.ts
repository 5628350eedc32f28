// Debian's chromium driven by playwright-core, for the browser tests. CI installs chromium (.ci/run): there a missing
// browser is a failure, not a skip; elsewhere the test file says why it skips.
import { existsSync } from "node:fs";
import { chromium } from "playwright-core";

export const CHROMIUM = "/usr/bin/chromium";
export const haveChromium = existsSync(CHROMIUM);

/** True when the browser tests of `file` cannot run here (and says so once). */
export function skipWithoutChromium(file: string): boolean {
  const skip = !haveChromium && !process.env.CI;
  if (skip)
    console.warn(
      `${file}: ${CHROMIUM} is not installed, so it is not tried in a browser; \`apt-get install -y chromium\` brings it`,
    );
  return skip;
}

/** Launches headless chromium with no background traffic of its own. */
export const launchChromium = () =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
