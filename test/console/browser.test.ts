import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { insertMemory } from '../../src/domain/records/memories.js';
import { startJobRunner } from '../../src/jobs/runner.js';
import { engine, newKey, newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';
import { hasChromium, launchChromium, type Browser } from '../helpers/chromium.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

if (!hasChromium) {
  // CI installs it (.ci/run); a machine without it says why these tests did not run.
  console.warn('test/console/browser.test.ts skipped: no Chromium at /usr/bin/chromium (apt-get install chromium)');
}

/** The console in a real browser, against the app listening on a local port, over the public /v1 API only. */
describe.skipIf(!hasChromium)(`the console in Chromium on ${engine}`, () => {
  let api: TestApi;
  let server: Server;
  let base: string;
  let browser: Browser;
  const cspViolations: string[] = [];

  beforeAll(async () => {
    api = await testApi();
    server = api.app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });

  afterAll(async () => {
    await browser?.close();
    await new Promise((resolve) => server?.close(resolve));
  });

  /** A new tab (its own sessionStorage: signed out), signed in with `key`. */
  async function signIn(key: string, hash = ''): Promise<Page> {
    const page = await browser.context.newPage();
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
    await page.goto(`${base}/console/${hash}`);
    await page.getByLabel('API key').fill(key);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('button', { name: 'Sign out' }).waitFor();
    return page;
  }

  const store = async (t: Tenant, subject: string, content: string) => {
    const res = await api.http
      .post('/v1/memories')
      .set(t.auth)
      .send({ agent_id: 'support-bot', anchor_external_id: subject, content });
    expect(res.status).toBe(201);
    return res.body as { id: string; anchor_id: string };
  };

  it('finds a subject created over REST, shows its memories, and corrects one so that the old is superseded', async () => {
    const t = await newTenant(api);
    const subject = `cust-${randomUUID().slice(0, 8)}`;
    const wrong = await store(t, subject, 'Lives in Lisbon');
    await store(t, subject, 'Prefers to be contacted by email');
    const session = await api.http
      .post('/v1/sessions')
      .set(t.auth)
      .send({ agent_id: 'support-bot', anchor_external_id: subject });
    await api.http
      .post('/v1/memories')
      .set(t.auth)
      .send({ agent_id: 'support-bot', session_id: session.body.id, content: 'Is travelling until Friday' });
    const page = await signIn(t.adminKey);

    await page.getByLabel('External id starts with').fill(subject.slice(0, 8));
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('link', { name: subject }).click();
    await page.getByRole('heading', { name: `Subject ${subject}` }).waitFor();
    const row = page.locator('li.memory', { hasText: 'Lives in Lisbon' });
    await expect(row.textContent()).resolves.toMatch(
      /Binding\s*anchored.*Confidence\s*0\.70.*Reinforced\s*0 times, last \S.*agent support-bot, stored directly/s,
    );
    await expect(page.locator('li.memory', { hasText: 'Prefers to be contacted by email' }).count()).resolves.toBe(1);

    await row.getByRole('button', { name: 'History' }).click();
    await row.locator('.history', { hasText: 'created' }).waitFor();

    await row.getByRole('button', { name: 'Correct' }).click();
    await page.getByLabel('Corrected content').fill('Lives in Porto');
    await page.getByRole('button', { name: 'Save correction' }).click();
    await page.getByRole('status').filter({ hasText: 'Corrected' }).waitFor();
    await page.locator('li.memory', { hasText: 'Lives in Porto' }).waitFor();
    await expect(page.locator('li.memory', { hasText: 'Lives in Lisbon' }).count()).resolves.toBe(0);

    // The old memory's page says it is superseded; REST agrees, with the key as the actor.
    await page.getByRole('status').getByRole('link').first().click();
    await page.locator('#memory-status', { hasText: 'superseded' }).waitFor();
    await page.getByText('corrected').first().waitFor();
    const old = await api.http.get(`/v1/memories/${wrong.id}`).set(t.auth);
    expect(old.body).toMatchObject({ status: 'superseded', superseded_by: expect.any(String) });
    const fixed = await api.http.get(`/v1/memories/${old.body.superseded_by as string}`).set(t.auth);
    expect(fixed.body.content).toBe('Lives in Porto');

    // Recall shows why each memory ranks where it does.
    await page.goto(`${base}/console/#/subjects/${wrong.anchor_id}`);
    await page.getByLabel('Query').fill('where does the customer live');
    await page.getByRole('button', { name: 'Recall' }).click();
    const recall = page.locator('table.recall');
    await recall.waitFor();
    await expect(recall.textContent()).resolves.toContain('Lives in Porto');
    await expect(recall.locator('thead').textContent()).resolves.toMatch(/Semantic.*Lexical.*Confidence.*Recency/);

    // Its sessions, each with the short-term memories stored in it.
    const sessions = page.locator('section', { has: page.getByRole('heading', { name: 'Sessions' }) });
    await expect(sessions.locator('tbody tr').textContent()).resolves.toMatch(/support-bot\s*active/);
    await sessions.getByRole('link').first().click();
    await page.locator('li.memory', { hasText: 'Is travelling until Friday' }).waitFor();
    await expect(page.locator('li.memory').textContent()).resolves.toMatch(/Binding\s*session/);
    await page.close();
  });

  it('is usable from the keyboard alone: sign in, correct a memory, confirm with Enter', async () => {
    const t = await newTenant(api);
    const subject = `kb-${randomUUID().slice(0, 8)}`;
    const m = await store(t, subject, 'Drinks tea');
    const page = await browser.context.newPage();
    await page.goto(`${base}/console/#/subjects/${m.anchor_id}`);
    await page.getByLabel('API key').focus();
    await page.keyboard.type(t.adminKey);
    await page.keyboard.press('Enter');
    const row = page.locator('li.memory', { hasText: 'Drinks tea' });
    await row.getByRole('button', { name: 'Correct' }).focus();
    await page.keyboard.press('Enter');
    // The form takes the focus, so typing goes straight into the content.
    await page.getByLabel('Corrected content').waitFor();
    // The form focuses its field once it has rendered, a moment after it appears.
    await page.waitForFunction(`document.activeElement?.id === ${JSON.stringify(`correct-${m.id}`)}`, undefined, {
      timeout: 5000,
    });
    await page.keyboard.press('Control+A');
    await page.keyboard.type('Drinks coffee');
    await page.keyboard.press('Tab');
    await expect(page.evaluate('document.activeElement?.textContent')).resolves.toBe('Save correction');
    await page.keyboard.press('Enter');
    await page.locator('li.memory', { hasText: 'Drinks coffee' }).waitFor();
    // Every form control has a label.
    // (A string: the test's TypeScript has no DOM types; the page runs it.)
    const unlabelled = await page.evaluate(
      "[...document.querySelectorAll('input, textarea, select')].filter((el) => !el.labels?.length && !el.getAttribute('aria-label')).length",
    );
    expect(unlabelled).toBe(0);
    await page.close();
  });

  it("reaches a superseded memory from its subject, records a correction as the key's, recalls as the subject's agent", async () => {
    const t = await newTenant(api);
    const subject = `moved-${randomUUID().slice(0, 8)}`;
    const wrong = await store(t, subject, 'Lives in Lisbon');
    const page = await signIn(t.adminKey, `#/subjects/${wrong.anchor_id}`);
    const row = page.locator('li.memory', { hasText: 'Lives in Lisbon' });
    await row.getByRole('button', { name: 'Correct' }).click();
    await page.getByLabel('Corrected content').fill('Lives in Porto');
    await page.getByRole('button', { name: 'Save correction' }).click();
    await page.getByRole('status').filter({ hasText: 'Corrected' }).waitFor();

    // A person corrected it, with the key: the trail does not say the agent did.
    const trail = await api.http.get(`/v1/memories/${wrong.id}/history`).set(t.auth);
    expect(trail.body.events.at(-1)).toMatchObject({
      action: 'corrected',
      actor: { key_id: expect.any(String), agent_id: null },
    });

    // The superseded memory is listed on its subject's page, and leads to its own.
    await page.getByRole('button', { name: 'Show superseded memories' }).click();
    const hide = page.getByRole('button', { name: 'Hide superseded memories' });
    await expect(hide.getAttribute('aria-expanded')).resolves.toBe('true');
    await page.locator('ul.superseded').getByRole('link', { name: 'Lives in Lisbon' }).click();
    await page.locator('#memory-status', { hasText: 'superseded' }).waitFor();
    await page.getByText('Reinforced').waitFor();
    await expect(page.locator('dd', { hasText: /times?, last/ }).textContent()).resolves.toMatch(/^0 times, last/);

    // Recall asks as the agent that wrote about the subject, not as one with no memories.
    await page.goto(`${base}/console/#/subjects/${wrong.anchor_id}`);
    await expect.poll(() => page.getByLabel('Agent').inputValue(), { timeout: 10_000 }).toBe('support-bot');

    // The tab has an icon, served by the console.
    const icon = await page.locator('link[rel="icon"]').getAttribute('href');
    const answer = await page.request.get(new URL(icon ?? '', `${base}/console/`).href);
    expect(answer.status()).toBe(200);
    expect(answer.headers()['content-type']).toMatch(/^image\/svg\+xml/);
    await page.close();
  });

  it('purges a subject after its external id is typed, shows the counts, and REST finds it gone', async () => {
    const t = await newTenant(api);
    const subject = `gdpr-${randomUUID().slice(0, 8)}`;
    const m = await store(t, subject, 'Wants to be forgotten');
    await store(t, subject, 'Was born in 1980');
    await api.http.post('/v1/sessions').set(t.auth).send({ agent_id: 'support-bot', anchor_external_id: subject });
    const page = await signIn(t.adminKey, `#/subjects/${m.anchor_id}`);
    const purge = page.getByRole('button', { name: 'Purge subject' });
    await expect(purge.isDisabled()).resolves.toBe(true);
    await page.getByLabel(/to confirm/).fill('gdpr-wrong');
    await expect(purge.isDisabled()).resolves.toBe(true);
    await page.getByLabel(/to confirm/).fill(subject);
    await purge.click();
    await page.getByRole('status').filter({ hasText: '2 memories and 1 session deleted' }).waitFor();
    expect((await api.http.get(`/v1/anchors/${m.anchor_id}`).set(t.auth)).status).toBe(404);
    expect((await api.http.get(`/v1/memories/${m.id}`).set(t.auth)).status).toBe(404);
    await page.close();
  });

  it('creates a key shown once with a copy button, and revokes it', async () => {
    const t = await newTenant(api);
    const page = await signIn(t.adminKey, '#/keys');
    await page.getByLabel('Name').fill('browser-made');
    await page.getByRole('button', { name: 'Create key' }).click();
    const secret = await page.getByLabel('New key').inputValue();
    expect(secret).toMatch(/^rk_[0-9A-Za-z]{40,}$/);
    await expect(page.getByRole('button', { name: 'Copy' }).isVisible()).resolves.toBe(true);
    const auth = { Authorization: `Bearer ${secret}` };
    expect((await api.http.get('/v1/keys/current').set(auth)).body.name).toBe('browser-made');

    await page.getByRole('button', { name: 'Done' }).click();
    await expect(page.getByLabel('New key').count()).resolves.toBe(0);
    const row = page.locator('tr', { hasText: 'browser-made' });
    await row.getByRole('button', { name: 'Revoke' }).click();
    await row.getByRole('button', { name: 'Revoke browser-made' }).click();
    await row.getByText('revoked').waitFor();
    expect((await api.http.get('/v1/keys/current').set(auth)).status).toBe(401);
    await page.close();
  });

  it('shows whether a memory is pinned and when it expires, and pins, unpins and sets its expiry', async () => {
    const t = await newTenant(api);
    const m = await store(t, `life-${randomUUID().slice(0, 8)}`, 'Allergic to penicillin');
    const page = await signIn(t.adminKey, `#/memories/${m.id}`);
    await page.locator('#memory-life', { hasText: 'not pinned, never expires' }).waitFor();
    await page.getByRole('button', { name: 'Pin', exact: true }).click();
    await page.locator('#memory-life', { hasText: 'pinned (no decay, no expiry)' }).waitFor();
    expect((await api.http.get(`/v1/memories/${m.id}`).set(t.auth)).body.pinned).toBe(true);

    await page.getByRole('button', { name: 'Unpin' }).click();
    await page.locator('#memory-life', { hasText: 'not pinned' }).waitFor();
    await page.getByLabel('Expires at').fill('2099-01-02T03:04');
    await page.getByRole('button', { name: 'Set expiry' }).click();
    // "never expires" holds the word too: wait for the date itself.
    await page.locator('#memory-life time').waitFor();
    const after = (await api.http.get(`/v1/memories/${m.id}`).set(t.auth)).body;
    expect(after).toMatchObject({ pinned: false, expires_at: expect.stringMatching(/^2099-01-0[12]T/) });
    await page.getByRole('button', { name: 'Clear expiry' }).click();
    await page.locator('#memory-life', { hasText: 'never expires' }).waitFor();
    const history = await api.http.get(`/v1/memories/${m.id}/history`).set(t.auth);
    expect(history.body.events.map((e: { action: string }) => e.action)).toEqual([
      'created',
      'updated',
      'updated',
      'updated',
      'updated',
    ]);
    await page.close();
  });

  it('lists jobs with their state, and follows a queued one until it succeeds', async () => {
    const t = await newTenant(api);
    const queued = await api.http
      .post('/v1/agents/support-bot/conversations/ingest?async=true')
      .set(t.auth)
      .send({ messages: [{ role: 'user', content: 'I live in Lisbon and I work as a carpenter.' }] });
    expect(queued.status).toBe(202);
    const reader = await newKey(api, t, ['read']);
    const page = await signIn(reader.auth.Authorization.replace('Bearer ', ''), '#/jobs');
    const row = page.locator('tr', { hasText: (queued.body as { id: string }).id.slice(0, 8) });
    await row.getByText('queued').waitFor();
    // No process runs jobs for this app until now: the page refreshes by itself while one is queued.
    const runner = startJobRunner(api.core);
    try {
      await row.getByText('succeeded').waitFor({ timeout: 30_000 });
      await row.getByText(/\d+ stored · 0 skipped/).waitFor();
      await row.getByText('1 of 1 messages').waitFor();
      const failed = await api.http
        .post('/v1/import?async=true')
        .set(t.auth)
        .set('Content-Type', 'application/x-ndjson')
        .send('{"type":"memory"}\n');
      expect(failed.status).toBe(202);
      const failedId = (failed.body as { id: string }).id;
      for (let state = ''; state !== 'failed'; await new Promise((r) => setTimeout(r, 50))) {
        state = ((await api.http.get(`/v1/jobs/${failedId}`).set(t.auth)).body as { state: string }).state;
      }
      await page.getByLabel('State').selectOption('failed');
      await page.getByRole('button', { name: 'Filter' }).click();
      const failedRow = page.locator('tr', { hasText: failedId.slice(0, 8) });
      await failedRow.getByText('invalid_request').waitFor({ timeout: 30_000 });
      await expect(page.locator('tbody tr').count()).resolves.toBe(1);
    } finally {
      await runner.stop(1000);
    }
    await page.close();
  });

  it("shows a read key no button it cannot use, and another tenant's ids as not found", async () => {
    const t = await newTenant(api);
    const subject = `ro-${randomUUID().slice(0, 8)}`;
    const m = await store(t, subject, 'Has a dog named Rex');
    await api.http.post('/v1/canon').set(t.auth).send({ agent_id: 'admin', content: 'Be kind' });
    const reader = await newKey(api, t, ['read']);
    const page = await signIn(reader.auth.Authorization.replace('Bearer ', ''), `#/subjects/${m.anchor_id}`);
    await page.locator('li.memory', { hasText: 'Has a dog named Rex' }).waitFor();
    for (const name of ['Correct', 'Delete', 'Purge subject', 'Revoke', 'Add rule', 'Pin', 'Set expiry']) {
      await expect(page.getByRole('button', { name, exact: true }).count()).resolves.toBe(0);
    }
    await expect(page.getByRole('link', { name: 'Keys' }).count()).resolves.toBe(0);
    await expect(page.getByRole('link', { name: 'Audit' }).count()).resolves.toBe(0);
    await page.goto(`${base}/console/#/memories/${m.id}`);
    await page.locator('#memory-status').waitFor();
    await expect(page.getByRole('button').allTextContents()).resolves.toEqual(['Sign out']);
    await page.goto(`${base}/console/#/canon`);
    await page.getByText('Be kind').waitFor();
    await expect(page.getByRole('button').allTextContents()).resolves.toEqual(['Sign out']);
    await page.close();

    const other = await newTenant(api);
    const stranger = await signIn(other.adminKey, `#/subjects/${m.anchor_id}`);
    await stranger
      .getByRole('alert')
      .filter({ hasText: /not found/i })
      .waitFor();
    await stranger.goto(`${base}/console/#/memories/${m.id}`);
    await stranger
      .getByRole('alert')
      .filter({ hasText: /not found/i })
      .waitFor();
    await expect(stranger.getByText('Has a dog named Rex').count()).resolves.toBe(0);
    await stranger.close();
  });

  it('opens a subject with 1,000 memories in under a second, one page at a time', async () => {
    const t = await newTenant(api);
    const subject = `big-${randomUUID().slice(0, 8)}`;
    const first = await store(t, subject, 'Fact number 0');
    const [vector] = await api.core.embedder.embed(['a fact']);
    if (!vector) throw new Error('no vector');
    await api.core.db.transaction().execute(async (trx) => {
      for (let i = 1; i < 1000; i++) {
        await insertMemory(
          trx,
          {
            tenantId: t.tenantId,
            id: randomUUID(),
            agentId: 'support-bot',
            content: `Fact number ${i}`,
            binding: 'anchored',
            anchorId: first.anchor_id,
            sessionId: null,
            confidence: 0.7,
            metadata: undefined,
            embedding: vector,
            now: new Date(),
          },
          { decayPerDay: api.core.config.decayPerDay, embedderId: api.core.embedder.id },
        );
      }
    });
    const page = await signIn(t.adminKey);
    const started = Date.now();
    await page.goto(`${base}/console/#/subjects/${first.anchor_id}`);
    await page.locator('li.memory').nth(49).waitFor();
    const ms = Date.now() - started;
    console.info(`a subject of 1,000 memories: first page shown in ${ms} ms`);
    expect(ms).toBeLessThan(1000);
    await expect(page.locator('li.memory').count()).resolves.toBe(50);
    await expect(page.locator('dl.summary').textContent()).resolves.toMatch(/Active memories\s*1000/);
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByRole('button', { name: 'First page' }).waitFor();
    await expect(page.locator('li.memory').count()).resolves.toBe(50);
    await page.close();
  });

  it('registers a webhook with its secret shown once, and shows an endpoint the service disabled and its deliveries', async () => {
    const t = await newTenant(api);
    const page = await signIn(t.adminKey, '#/webhooks');
    await page.getByLabel('URL').fill('https://example.com/crm-hook');
    await page.getByRole('button', { name: 'Register endpoint' }).click();
    expect(await page.getByLabel('Signing secret').inputValue()).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    await page.getByRole('button', { name: 'Done' }).click();
    await page.locator('tr', { hasText: 'https://example.com/crm-hook' }).getByText('enabled').waitFor();

    // A receiver that always fails, and a schedule of one short retry: the service disables it.
    const receiver = await startReceiver(503);
    try {
      const failing = await testApi({ config: { WEBHOOK_ALLOW_PRIVATE: 'true', WEBHOOK_RETRY_SCHEDULE: '0.05' } });
      const hook = await failing.http
        .post('/v1/webhooks')
        .set(t.auth)
        .send({ url: receiver.url, events: ['*'] });
      await store(t, `hook-${randomUUID().slice(0, 8)}`, 'Prefers the morning shift');
      const dispatcher = new WebhookDispatcher(failing.core, { tenantId: t.tenantId });
      await dispatcher.drain();
      await new Promise((r) => setTimeout(r, 100));
      await dispatcher.drain();
      await page.reload();
      await page.locator('tr', { hasText: receiver.url }).getByText('disabled by the service').waitFor();
      await page.getByRole('link', { name: receiver.url }).click();
      await page.getByRole('alert').filter({ hasText: 'failed all 2 attempts (last: HTTP 503)' }).waitFor();
      const row = page.locator('tr', { hasText: 'memory.created' });
      await row.getByText('failed', { exact: true }).waitFor();
      await expect(row.getByText('HTTP 503').count()).resolves.toBe(1);
      await page.getByRole('button', { name: 'Enable' }).click();
      await page.getByRole('button', { name: 'Pause' }).waitFor();
      expect((await api.http.get(`/v1/webhooks/${(hook.body as { id: string }).id}`).set(t.auth)).body).toMatchObject({
        enabled: true,
        disabled_reason: null,
      });
    } finally {
      await receiver.close();
    }
    await page.close();
  });

  it('loads nothing the Content-Security-Policy refuses', () => {
    expect(cspViolations).toEqual([]);
  });
});
