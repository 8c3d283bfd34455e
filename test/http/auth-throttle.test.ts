import { randomUUID } from 'node:crypto';
import type { Request } from 'express';
import { describe, expect, it } from 'vitest';
import { AuthThrottle } from '../../src/access/auth-throttle.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { AppError } from '../../src/errors.js';
import { newTenant, SETUP_TOKEN, testApi, type TestApi } from '../helpers/harness.js';
import { expectProblem } from '../helpers/problem.js';

type Headers = Record<string, string>;

const bearer = (key: string): Headers => ({ Authorization: `Bearer ${key}` });
/** A well-formed key that is no one's, with a prefix of its own. */
const strangerKey = (): string => `mk_${randomUUID().replaceAll('-', '')}${'Zz9'.repeat(3)}`;
/** The key's public prefix (its first 12 characters) with another secret. */
const guessAt = (key: string): string => `${key.slice(0, 12)}${'q'.repeat(key.length - 12)}`;
const from = (client: string): Headers => ({ 'X-Forwarded-For': client });

const rest = (api: TestApi, headers: Headers) => api.http.get('/v1/anchors').set(headers);
const mcp = (api: TestApi, headers: Headers) =>
  api.http
    .post('/mcp')
    .set(headers)
    .set('Accept', 'application/json, text/event-stream')
    .send({ jsonrpc: '2.0', id: 1, method: 'tools/list' });

async function failTimes(n: number, attempt: () => Promise<{ status: number }>): Promise<void> {
  for (let i = 0; i < n; i++) expect((await attempt()).status).toBe(401);
}

describe("failed authentications never lock out another's valid key", () => {
  it('accepts a valid key on /v1 and /mcp from an address past its allowance of failures on /v1', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const wrong = bearer(strangerKey());
    await failTimes(30, () => rest(api, wrong));
    expectProblem(await rest(api, wrong), 429, 'rate_limited');
    expect((await rest(api, t.auth)).status).toBe(200);
    expect((await mcp(api, t.auth)).status).toBe(200);
  });

  it('accepts a valid key on /mcp and /v1 from an address past its allowance of failures on /mcp', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const wrong = bearer(strangerKey());
    await failTimes(30, () => mcp(api, wrong));
    expectProblem(await mcp(api, wrong), 429, 'rate_limited');
    expect((await mcp(api, t.auth)).status).toBe(200);
    expect((await rest(api, t.auth)).status).toBe(200);
  });

  it('answers a spray of different keys 429 past the allowance, and still accepts a valid key', async () => {
    const api = await testApi({ config: { AUTH_FAILURES_PER_MINUTE: '3' } });
    const t = await newTenant(api);
    await failTimes(3, () => rest(api, bearer(strangerKey())));
    const limited = await mcp(api, bearer(strangerKey()));
    expectProblem(limited, 429, 'rate_limited');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expectProblem(await rest(api, { Authorization: 'Bearer not-a-key' }), 429, 'rate_limited');
    expect((await rest(api, t.auth)).status).toBe(200);
    expect((await mcp(api, t.auth)).status).toBe(200);
  });

  it('refuses guesses at one key past the allowance without checking them; its holder, accepted before, gets in', async () => {
    const api = await testApi({ config: { AUTH_FAILURES_PER_MINUTE: '3' } });
    const t = await newTenant(api);
    expect((await rest(api, t.auth)).status).toBe(200);
    const guess = bearer(guessAt(t.adminKey));
    await failTimes(3, () => rest(api, guess));
    const limited = await mcp(api, guess);
    expectProblem(limited, 429, 'rate_limited');
    expect(limited.body.detail).toMatch(/key prefix/);
    expect((await rest(api, t.auth)).status).toBe(200);
    expect((await mcp(api, t.auth)).status).toBe(200);
  });

  it('refuses the right secret too while its prefix is throttled, when this process has not accepted it yet', async () => {
    const api = await testApi({ config: { AUTH_FAILURES_PER_MINUTE: '3', TRUST_PROXY: 'loopback' } });
    const t = await newTenant(api);
    const created = await api.http
      .post('/v1/keys')
      .set(t.auth)
      .send({ name: 'fresh', scopes: ['read'] });
    const fresh = created.body.api_key as string;
    await failTimes(3, () => rest(api, { ...bearer(guessAt(fresh)), ...from('203.0.113.1') }));
    // Unchecked: the attacker learns nothing from this answer, whatever the secret.
    expectProblem(await rest(api, { ...bearer(fresh), ...from('203.0.113.1') }), 429, 'rate_limited');
    // From another client address the key is checked, and accepted.
    expect((await rest(api, { ...bearer(fresh), ...from('203.0.113.2') })).status).toBe(200);
  });

  it('slows guesses at the setup token without refusing keys', async () => {
    const api = await testApi({ config: { AUTH_FAILURES_PER_MINUTE: '2' } });
    // Made through another app on the same database: this one has accepted no token yet.
    const t = await newTenant(await testApi());
    const setup = (token: string) =>
      api.http.post('/v1/setup').set('X-Setup-Token', token).send({ org_name: randomUUID() });
    await failTimes(2, () => setup('wrong-token-wrong-token'));
    expectProblem(await setup(SETUP_TOKEN), 429, 'rate_limited');
    expect((await rest(api, t.auth)).status).toBe(200);
  });

  it('does not throttle when set to 0', async () => {
    const api = await testApi({ config: { AUTH_FAILURES_PER_MINUTE: '0' } });
    const wrong = bearer(strangerKey());
    await failTimes(40, () => rest(api, wrong));
  });

  it('keeps a bounded number of counters under a flood of addresses', async () => {
    const throttle = new AuthThrottle(3, { now: () => 0, maxCounters: 100 });
    const refuse = () => {
      throw new AppError('unauthorized', 'no');
    };
    for (let i = 0; i < 1000; i++) {
      const req = { ip: `198.51.${i >> 8}.${i & 255}`, socket: {} } as Request;
      await expect(throttle.guard(req, { family: `mk_${i}`, secret: `s${i}` }, refuse)).rejects.toThrow('no');
    }
    expect(throttle.tracked).toBeLessThanOrEqual(100);
  });
});

describe('TRUST_PROXY: the client address behind a proxy', () => {
  const wrong = bearer(strangerKey());

  for (const setting of [undefined, '10.0.0.0/8', '192.0.2.1']) {
    it(`ignores X-Forwarded-For from a peer it does not trust (TRUST_PROXY=${setting ?? 'unset'})`, async () => {
      const config: Headers = { AUTH_FAILURES_PER_MINUTE: '3', ...(setting ? { TRUST_PROXY: setting } : {}) };
      const api = await testApi({ config });
      await failTimes(3, () => rest(api, { ...wrong, ...from('203.0.113.1') }));
      // Another forwarded address does not make another client: the peer is one client.
      expectProblem(await rest(api, { ...wrong, ...from('203.0.113.2') }), 429, 'rate_limited');
      expectProblem(await mcp(api, { ...wrong, ...from('203.0.113.3') }), 429, 'rate_limited');
    });
  }

  for (const setting of ['loopback', '127.0.0.1, ::1', '1']) {
    it(`counts each forwarded client apart behind a trusted proxy (TRUST_PROXY=${setting}), on /v1 and /mcp`, async () => {
      const api = await testApi({ config: { AUTH_FAILURES_PER_MINUTE: '3', TRUST_PROXY: setting } });
      await failTimes(3, () => mcp(api, { ...wrong, ...from('203.0.113.1') }));
      expectProblem(await rest(api, { ...wrong, ...from('203.0.113.1') }), 429, 'rate_limited');
      expect((await rest(api, { ...wrong, ...from('203.0.113.2') })).status).toBe(401);
      expect((await mcp(api, { ...wrong, ...from('203.0.113.2') })).status).toBe(401);
    });
  }

  it('takes the client from the hops it trusts: addresses a client prepends do not make it another', async () => {
    const api = await testApi({ config: { AUTH_FAILURES_PER_MINUTE: '3', TRUST_PROXY: '1' } });
    for (let i = 0; i < 3; i++) {
      expect((await rest(api, { ...wrong, ...from(`198.51.100.${i}, 203.0.113.1`) })).status).toBe(401);
    }
    expectProblem(await rest(api, { ...wrong, ...from('198.51.100.9, 203.0.113.1') }), 429, 'rate_limited');
  });

  it('counts an IPv6 /64 as one client, and whatever else a proxy forwards as one more', async () => {
    const api = await testApi({ config: { AUTH_FAILURES_PER_MINUTE: '3', TRUST_PROXY: 'loopback' } });
    for (const client of ['2001:db8:0:7::1', '2001:db8:0:7:0:0:0:2', '2001:0db8:0000:0007:ffff::3']) {
      expect((await rest(api, { ...wrong, ...from(client) })).status).toBe(401);
    }
    expectProblem(await rest(api, { ...wrong, ...from('2001:db8:0:7::9') }), 429, 'rate_limited');
    expect((await rest(api, { ...wrong, ...from('2001:db8:0:8::1') })).status).toBe(401);
    await failTimes(3, () => rest(api, { ...wrong, ...from(`not-an-address-${'x'.repeat(500)}`) }));
    expectProblem(await rest(api, { ...wrong, ...from('not-an-address-either') }), 429, 'rate_limited');
  });

  it('reads a hop count or proxy addresses, and refuses anything else naming the variable', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toBe(2);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 10.0.0.0/8,fd00::/8 ,192.0.2.7' }).trustProxy).toEqual([
      'loopback',
      '10.0.0.0/8',
      'fd00::/8',
      '192.0.2.7',
    ]);
    for (const bad of ['true', '*', '10.0.0.0/33', 'proxy.example.com', '1,2', '10.0.0.1/8/8', '::1/129']) {
      expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow(ConfigError);
      expect(() => loadConfig({ TRUST_PROXY: bad })).toThrow(/TRUST_PROXY/);
    }
  });
});
