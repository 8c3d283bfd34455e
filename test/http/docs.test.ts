import { describe, expect, it } from 'vitest';
import { testApi } from '../helpers/harness.js';

/** Issue 15 point 6: a rendered API reference at /docs that loads nothing from another origin. */
describe('the API reference at /docs', () => {
  it('is an HTML page whose scripts, styles and icon are all of this origin, under a strict CSP', async () => {
    const api = await testApi();
    const res = await api.http.get('/docs');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).not.toMatch(/https?:|\*/);
    const html = res.text;
    // No inline script: every <script> has a src, so the CSP needs no 'unsafe-inline' for scripts.
    const scripts = [...html.matchAll(/<script([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/src="/);
      expect(body!.trim()).toBe('');
    }
    const urls = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(urls.length).toBeGreaterThanOrEqual(4);
    for (const url of urls) expect(url, url).toMatch(/^\/docs\/assets\//);
    expect(html).not.toMatch(/https?:\/\//);
    // Every asset the page names is served, with its type.
    for (const url of urls) {
      const asset = await api.http.get(url).buffer(true);
      expect(asset.status, url).toBe(200);
      expect(Number(asset.headers['content-length'] ?? asset.body.length), url).toBeGreaterThan(0);
    }
    const bundle = await api.http.get('/docs/assets/swagger-ui-bundle.js');
    expect(bundle.headers['content-type']).toMatch(/javascript/);
    expect(bundle.text).toContain('SwaggerUIBundle');
    const init = await api.http.get('/docs/assets/init.js');
    expect(init.text).toContain("url: '/v1/openapi.json'");
    // Swagger UI would send the document to an outside validator unless told not to.
    expect(init.text).toContain('validatorUrl: null');
    expect((await api.http.get('/docs/assets/swagger-ui.css')).headers['content-type']).toMatch(/^text\/css/);
    expect((await api.http.get('/docs/assets/index.html')).status).toBe(404);
  });
});
