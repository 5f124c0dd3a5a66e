/** Headless Chromium for the web UI tests (Debian's chromium, driven with playwright-core). */
import { existsSync } from 'node:fs';
import { chromium, type BrowserContext } from 'playwright-core';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// The machine has no network: nothing in the browser may try to reach one.
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** The Authorization header of guest/guest. */
export const GUEST = `Basic ${Buffer.from('guest:guest').toString('base64')}`;

/**
 * For a suite's before hook: without Chromium, runs cleanup and skips the suite saying how to
 * install it; on CI (where .ci/run installs it) fails instead.
 */
export async function skipWithoutChromium(ctx: Mocha.Context, cleanup: () => Promise<void> = async () => {}): Promise<void> {
  if (existsSync(CHROMIUM)) return;
  await cleanup();
  if (process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium`);
  console.log(`    (skipped: no ${CHROMIUM}; apt-get install -y chromium)`);
  ctx.skip();
}

/** Headless Chromium with its profile in dir, a 1280×800 viewport. */
export function launchChromium(dir: string, options: { acceptDownloads?: boolean } = {}): Promise<BrowserContext> {
  return chromium.launchPersistentContext(dir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport: { width: 1280, height: 800 }, ...options });
}
