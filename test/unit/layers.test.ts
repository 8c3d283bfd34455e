import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../../src');

/** The source files under `dir` and every module each one imports, as paths relative to src. */
function importsUnder(dir: string): { file: string; imported: string }[] {
  const found: { file: string; imported: string }[] = [];
  for (const entry of readdirSync(join(SRC, dir), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.[jt]s$/u.test(entry.name)) continue;
    const path = join(entry.parentPath, entry.name);
    const text = readFileSync(path, 'utf8');
    for (const [, specifier] of text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/gu)) {
      found.push({ file: relative(SRC, path), imported: relative(SRC, join(dirname(path), specifier ?? '')) });
    }
  }
  return found;
}

/**
 * The ports (embedder, extractor, contradiction detector and what they share) sit below the domain
 * core: the core depends on them, never the other way, so each can be replaced or tested alone.
 */
describe('layers', () => {
  it.each(['beliefs', 'embedding', 'extraction', 'llm', 'text', 'db'])(
    'src/%s imports nothing from the domain core or the transports',
    (dir) => {
      const upward = importsUnder(dir).filter(({ imported }) =>
        /^(domain|http|mcp|cli|access)\/|^(start-core|app)\.[jt]s$/u.test(imported),
      );
      expect(upward).toEqual([]);
    },
  );

  // The two doors share what is below them (src/access: authentication and rate limits), never each other.
  it.each([
    ['mcp', 'http'],
    ['http', 'mcp'],
  ])('src/%s imports nothing from src/%s', (door, other) => {
    expect(importsUnder(door).filter(({ imported }) => imported.startsWith(`${other}/`))).toEqual([]);
  });

  // The framework adapters are a door of their own, over the typed client: what a user's process
  // imports from the package without the server, its database or its domain.
  it('src/adapters imports only the typed client and itself', () => {
    expect(importsUnder('adapters').filter(({ imported }) => !/^(client|adapters)\//u.test(imported))).toEqual([]);
  });
});
