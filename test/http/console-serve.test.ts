import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { CONSOLE_CSP } from '../../src/console/serve.js';
import { testApi } from '../helpers/harness.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

describe('the console is served by the same process', () => {
  it('serves its page, its modules and the vendored Preact with a strict Content-Security-Policy', async () => {
    const api = await testApi();
    const page = await api.http.get('/console/');
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect(CONSOLE_CSP).toContain("script-src 'self'");
    expect(CONSOLE_CSP).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['referrer-policy']).toBe('no-referrer');
    for (const file of [
      '/console/app.js',
      '/console/pages/subject.js',
      '/console/vendor/preact.js',
      '/console/vendor/hooks.js',
      '/console/vendor/htm.js',
    ]) {
      const res = await api.http.get(file);
      expect(res.status, file).toBe(200);
      expect(res.headers['content-type'], file).toMatch(/^text\/javascript/);
      expect(res.headers['content-security-policy'], file).toBe(CONSOLE_CSP);
    }
    // Every vendored module imports only files beside it: a bare name needs an import map (inline script).
    const hooks = await api.http.get('/console/vendor/hooks.js');
    expect(hooks.text).toContain('from"./preact.js"');
    expect(hooks.text).not.toMatch(/from\s*["']preact["']/);
    expect((await api.http.get('/console/vendor/nothing.js')).status).toBe(404);
    expect((await api.http.get('/console')).status).toBe(301);
    expect((await api.http.get('/console/nothing.js')).status).toBe(404);
    expect((await api.http.get('/console/%2e%2e/package.json')).status).not.toBe(200);
  });

  it('ships no inline script or style, and no address of another origin', () => {
    const html = readFileSync(path.join(ROOT, 'console/index.html'), 'utf8');
    expect(html).not.toMatch(/<script(?![^>]*\ssrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=/);
    const files = readdirSync(path.join(ROOT, 'console'), { recursive: true, encoding: 'utf8' });
    for (const file of files.filter((f) => /\.(js|html|css)$/.test(f))) {
      expect(readFileSync(path.join(ROOT, 'console', file), 'utf8'), file).not.toMatch(/https?:\/\//);
    }
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      files: string[];
      dependencies: Record<string, string>;
    };
    expect(pkg.files).toContain('console');
    expect(pkg.dependencies.htm).toBeDefined();
    expect(pkg.dependencies.preact).toBeDefined();
  });
});
