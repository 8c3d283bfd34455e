/**
 * The pictures of the console in docs/console.md: a throwaway service in memory, a tenant with a few
 * memories told over REST (one corrected, one subject ingested from a conversation), and Debian's
 * Chromium through playwright-core taking a PNG of each main page into docs/console/.
 *   npm run screenshots:console
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Page } from 'playwright-core';
import { pino } from 'pino';
import { createApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { createTenant } from '../src/domain/tenancy/tenants.js';
import { startCore } from '../src/start-core.js';

const OUT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../docs/console');

const config = loadConfig({
  DATA_DIR: ':memory:',
  EMBEDDER: 'hash',
  LOG_LEVEL: 'silent',
  ANTHROPIC_API_KEY: '',
  RATE_LIMIT_PER_MINUTE: '0',
});
const running = await startCore(config, { log: pino({ level: 'silent' }) });
const server = createApp(running.core).listen(0, '127.0.0.1');
await new Promise((resolve) => server.once('listening', resolve));
const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const tenant = await createTenant(running.core, 'Acme support');

async function call(method: string, route: string, body?: unknown): Promise<Record<string, unknown>> {
  const res = await fetch(`${base}/v1${route}`, {
    method,
    headers: { Authorization: `Bearer ${tenant.apiKey}`, 'Content-Type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${route}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, unknown>;
}

const remember = (subject: string, content: string) =>
  call('POST', '/memories', { agent_id: 'support-bot', anchor_external_id: subject, content });

const wrong = await remember('customer-42', 'Lives in Lisbon');
await remember('customer-42', 'Prefers to be contacted by email');
await remember('customer-42', 'Prefers to be contacted by email');
await remember('customer-42', 'Has a premium plan since 2023');
await call('PATCH', `/memories/${String(wrong.id)}`, { content: 'Lives in Porto', agent_id: 'reviewer' });
await call('POST', '/agents/support-bot/conversations/ingest', {
  anchor_external_id: 'customer-42',
  conversation_id: 'ticket-7',
  messages: [
    { id: '1', role: 'user', content: 'I am allergic to peanuts, and my daughter Mila is seven.' },
    { id: '2', role: 'assistant', content: 'Noted, thank you.' },
  ],
});
const session = await call('POST', '/sessions', { agent_id: 'support-bot', anchor_external_id: 'customer-42' });
await call('POST', '/memories', {
  agent_id: 'support-bot',
  session_id: session.id,
  content: 'Is travelling until Friday',
});
for (const subject of ['customer-7', 'customer-19', 'patient-3']) await remember(subject, 'Prefers morning calls');
await call('POST', '/canon', {
  agent_id: 'admin',
  content: "Never share a customer's contact details with another customer",
});
await call('POST', '/keys', { name: 'support-bot', scopes: ['read', 'write'], agent_ids: ['support-bot'] });
await call('POST', '/keys', { name: 'dashboard', scopes: ['read'] });
await call('POST', '/webhooks', {
  url: 'https://compliance.example.com/agent-memory',
  events: ['subject.purged', 'memory.deleted'],
  description: 'compliance log',
});
const anchors = await call('GET', '/anchors?anchor_external_id=customer-42');
const anchorId = String((anchors.anchors as { id: string }[])[0]?.id);

const profile = mkdtempSync(path.join(os.tmpdir(), 'agent-memory-shots-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  headless: true,
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
  viewport: { width: 1200, height: 860 },
});
try {
  mkdirSync(OUT, { recursive: true });
  const page: Page = await context.newPage();
  await page.goto(`${base}/console/`);
  await page.getByLabel('API key').fill(tenant.apiKey);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('link', { name: 'customer-42' }).waitFor();
  await page.screenshot({ path: path.join(OUT, 'subjects.png') });

  await page.goto(`${base}/console/#/subjects/${anchorId}`);
  await page.locator('li.memory').first().waitFor();
  await page.getByLabel('Query').fill('how should we contact them');
  await page.getByRole('button', { name: 'Recall' }).click();
  await page.locator('table.recall').waitFor();
  await page.locator('li.memory', { hasText: 'Lives in Porto' }).getByRole('button', { name: 'History' }).click();
  await page.locator('.history', { hasText: 'created' }).waitFor();
  await page.screenshot({ path: path.join(OUT, 'subject.png'), fullPage: true });

  await page.goto(`${base}/console/#/memories/${String(wrong.id)}`);
  await page.locator('#memory-status').waitFor();
  await page.locator('.history li').nth(1).waitFor();
  await page.screenshot({ path: path.join(OUT, 'memory.png') });

  await page.goto(`${base}/console/#/audit`);
  await page.locator('table.audit').waitFor();
  await page.screenshot({ path: path.join(OUT, 'audit.png') });

  await page.goto(`${base}/console/#/keys`);
  await page.getByLabel('Name').fill('nightly-export');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByLabel('New key').waitFor();
  await page.screenshot({ path: path.join(OUT, 'keys.png') });

  await page.goto(`${base}/console/#/webhooks`);
  await page.getByLabel('URL').fill('https://crm.example.com/hooks');
  await page.getByRole('button', { name: 'Register endpoint' }).click();
  await page.getByLabel('Signing secret').waitFor();
  await page.locator('tr', { hasText: 'https://crm.example.com/hooks' }).waitFor();
  await page.screenshot({ path: path.join(OUT, 'webhooks.png') });
  console.info(`screenshots written to ${path.relative(process.cwd(), OUT)}`);
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
  server.close();
  await running.close();
}
