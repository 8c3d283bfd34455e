import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTenant, testApi, type Tenant, type TestApi } from '../helpers/harness.js';

/**
 * An import whose body its Content-Encoding cannot decode is a 400, and nothing else: the decoder's
 * error must reach the request, never the process (an 'error' event with no listener yet, while the
 * spool folder was being made, used to end the server).
 */
describe('an import body its Content-Encoding cannot decode', () => {
  let api: TestApi;
  let tenant: Tenant;
  const uncaught: unknown[] = [];
  const record = (error: unknown) => uncaught.push(error);

  beforeAll(async () => {
    process.on('uncaughtException', record);
    api = await testApi();
    tenant = await newTenant(api);
  });
  afterAll(() => {
    process.off('uncaughtException', record);
  });

  it.each(['gzip', 'deflate', 'br'])('is a 400 with %s, and the process takes no error', async (encoding) => {
    const res = await api.http
      .post('/v1/import')
      .set(tenant.auth)
      .set('Content-Type', 'application/x-ndjson')
      .set('Content-Encoding', encoding)
      .send('{"a":1}');
    expect(res.status).toBe(400);
    expect((res.body as { detail: string }).detail).toBe('the body is not valid data of its Content-Encoding');
    // The decoder reports on the next ticks: give them time to run.
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(uncaught.map(String)).toEqual([]);
  });
});
