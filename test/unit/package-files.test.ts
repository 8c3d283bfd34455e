import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * What the published package may hold: the CLI, the console's static files, the compiled server,
 * client and adapters with their declarations, the migrations, and what npm always adds. Sources,
 * tests, tooling, docs and their images, the Python client and source maps (which would point at
 * sources not shipped) stay out.
 */
const ALLOWED = [
  /^package\.json$/u,
  /^README\.md$/u,
  /^LICENSE$/u,
  /^bin\/agent-memory\.js$/u,
  /^console\/[a-z/-]+\.(js|css|html|svg)$/u,
  /^dist\/[a-z0-9/-]+\.(js|d\.ts)$/u,
  /^migrations\/\d{4}_[a-z0-9_]+\.sql$/u,
];
const allowed = (path: string) => ALLOWED.some((pattern) => pattern.test(path));

/** What the build leaves in dist/ that the package does not need (package.json "files"). */
const notShipped = (path: string) =>
  path.endsWith('.map') || path === 'dist/openapi.json' || path === 'dist/.build-stamp';

function filesUnder(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

describe('the published package', () => {
  it('refuses what does not belong in it', () => {
    for (const stray of [
      'src/app.ts',
      'test/smoke.test.ts',
      'tools/build.mjs',
      'docs/console/subjects.png',
      'clients/python/pyproject.toml',
      'dist/app.js.map',
      '.ci/run',
      'dist/adapters/ai-sdk/index.ts',
    ]) {
      expect(allowed(stray), stray).toBe(false);
    }
  });

  it('holds what it needs and nothing else (npm pack --dry-run)', () => {
    expect(existsSync(join(ROOT, 'dist', '.build-stamp')), 'dist/ is built (npm run build)').toBe(true);
    // --ignore-scripts: the prepare script would build, which is not this test's business.
    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
        cwd: ROOT,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    ) as { files: { path: string }[] }[];
    const files = packed[0]!.files.map((f) => f.path).sort();

    expect(files.filter((path) => !allowed(path))).toEqual([]);

    // Nothing the server, the console or a user's import needs is left out.
    const needed = [
      ...filesUnder('dist').filter((path) => !notShipped(path)),
      ...filesUnder('console'),
      ...filesUnder('migrations'),
      'bin/agent-memory.js',
    ];
    expect(needed.filter((path) => !files.includes(path))).toEqual([]);

    // No shipped file names a source map: the package has none, and a bundler warns of each one missing.
    const naming = files.filter(
      (path) => path.endsWith('.js') && /sourceMappingURL=/u.test(readFileSync(join(ROOT, path), 'utf8')),
    );
    expect(naming).toEqual([]);

    // Every entry point package.json names is in it, for ESM and for TypeScript (exports, typesVersions).
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      exports: Record<string, string | { types: string; default: string }>;
      typesVersions: Record<string, Record<string, string[]>>;
    };
    const entries = Object.values(pkg.exports).flatMap((target) =>
      typeof target === 'string' ? [target] : [target.types, target.default],
    );
    const typed = Object.values(pkg.typesVersions['*'] ?? {}).flat();
    for (const entry of [...entries, ...typed]) expect(files, entry).toContain(entry.replace(/^\.\//u, ''));
    for (const subpath of ['./client', './ai-sdk', './openai-agents', './langchain', './langgraph']) {
      expect(pkg.exports[subpath], subpath).toBeDefined();
    }
  });
});
