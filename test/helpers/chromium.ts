import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext } from 'playwright-core';

/** Debian's Chromium (apt-get install chromium): the tests never download a browser. */
export const CHROMIUM = '/usr/bin/chromium';
export const hasChromium = existsSync(CHROMIUM);

/**
 * Without the background-networking flags Chromium keeps calling home (updates, sync, field
 * trials), which on a closed network only adds timeouts. Each launch gets a fresh profile.
 */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface Browser {
  context: BrowserContext;
  close: () => Promise<void>;
}

/** A persistent context on a fresh profile: each new page is a new tab with its own sessionStorage. */
export async function launchChromium(): Promise<Browser> {
  const profile = mkdtempSync(path.join(os.tmpdir(), 'agent-memory-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ARGS,
    viewport: { width: 1280, height: 900 },
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}
