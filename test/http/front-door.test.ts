import { describe, expect, it } from 'vitest';
import { VERSION } from '../../src/version.js';
import { engine, testApi } from '../helpers/harness.js';

/** GET /: where a newcomer goes from the server's root, as JSON for a client and a page for a browser. */
describe(`GET / on ${engine}`, () => {
  it('answers an API client with the links as JSON', async () => {
    const api = await testApi();
    for (const accept of [undefined, 'application/json', '*/*']) {
      const req = api.http.get('/');
      const res = accept ? await req.set('Accept', accept) : await req;
      expect(res.status, accept).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.headers.vary).toMatch(/Accept/);
      expect(res.body).toEqual({
        name: 'agent-memory',
        version: VERSION,
        console: '/console/',
        docs: '/docs',
        openapi: '/v1/openapi.json',
        mcp: '/mcp',
        health: '/readyz',
      });
    }
  });

  it('answers a browser with a page linking the console, the API reference and the document', async () => {
    const api = await testApi();
    const res = await api.http.get('/').set('Accept', 'text/html,application/xhtml+xml,*/*;q=0.8');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    for (const href of ['/console/', '/docs', '/v1/openapi.json', '/console/favicon.svg']) {
      expect(res.text).toContain(`href="${href}"`);
    }
    // Each link answers.
    for (const path of ['/console/', '/docs', '/v1/openapi.json'])
      expect((await api.http.get(path)).status, path).toBe(200);
    const icon = await api.http.get('/console/favicon.svg');
    expect(icon.status).toBe(200);
    expect(icon.headers['content-type']).toMatch(/^image\/svg\+xml/);
  });

  it('is in the OpenAPI document', async () => {
    const api = await testApi();
    const doc = (await api.http.get('/v1/openapi.json')).body as {
      paths: Record<string, { get?: { operationId: string } }>;
    };
    expect(doc.paths['/']?.get?.operationId).toBe('getFrontDoor');
  });
});
