/** Headless Chromium (the system's /usr/bin/chromium, or HOLON_CHROMIUM) driven by playwright-core, for tests of pages. */
import { chromium, type Browser } from 'playwright-core';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.HOLON_CHROMIUM ?? '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
  });
}
