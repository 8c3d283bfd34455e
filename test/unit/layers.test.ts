import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = join(dirname(fileURLToPath(import.meta.url)), '../../src');

/** The room of a path relative to src: its top folder, or the file's name for a file at the top. */
const roomOf = (path: string): string => {
  const [top, below] = path.split('/');
  return below === undefined ? (top ?? '').replace(/\.[jt]s$/u, '') : (top ?? '');
};

/** Every source file of src, and the modules and packages each one imports. */
function sourceFiles(): { file: string; text: string }[] {
  return readdirSync(SRC, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && /\.[jt]s$/u.test(entry.name))
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      return { file: relative(SRC, path), text: readFileSync(path, 'utf8') };
    });
}

const IMPORT = /(?:from|import)\s*\(?\s*'([^']+)'/gu;

function imports(): { file: string; imported: string }[] {
  return sourceFiles().flatMap(({ file, text }) =>
    [...text.matchAll(IMPORT)].map(([, specifier = '']) => ({
      file,
      imported: specifier.startsWith('.') ? relative(SRC, join(SRC, dirname(file), specifier)) : `package:${specifier}`,
    })),
  );
}

/** What every room may read, besides itself: configuration, errors, logging, deadlines, the version, the vocabulary. */
const BASE = ['config', 'errors', 'logger', 'deadline', 'version', 'vocabulary'] as const;

/**
 * The allowed edges: each room of src and the rooms it may import. Read from the top: the doors
 * (cli, app with http and mcp, the console, the framework adapters over the typed client) → the
 * requests run later (jobs) → the composition (start-core, measured, preflight, reembed) → the core
 * (retrieval, portability, webhooks over the domain) → the wire shapes (schemas) and the ports
 * (beliefs, extraction, embedding, llm) → the database (db), text and the filter language → the
 * base. No door imports db; the domain imports neither retrieval nor webhooks; schemas import no
 * domain. docs/architecture.md §1 shows the same table.
 */
const ALLOWED: Record<string, readonly string[]> = {
  // The doors.
  cli: ['app', 'http', 'mcp', 'jobs', 'start-core', 'preflight', 'reembed', 'portability', 'domain', 'embedding'],
  app: ['http', 'mcp', 'console', 'access', 'schemas', 'domain'],
  http: ['access', 'jobs', 'measured', 'portability', 'webhooks', 'domain', 'schemas', 'filter', 'llm'],
  mcp: ['access', 'measured', 'retrieval', 'domain', 'schemas', 'filter'],
  console: [],
  adapters: ['client'],
  client: [],
  // Authentication and rate limits, which the doors share rather than import from each other.
  access: ['domain'],
  // A door's request run later: the same entry points as the synchronous call.
  jobs: ['measured', 'portability', 'domain', 'schemas', 'db'],
  // The composition: the core wired (start-core), timed (measured), checked before it starts
  // (preflight), and the database's vectors made again (reembed).
  'start-core': ['webhooks', 'domain', 'beliefs', 'extraction', 'embedding', 'llm', 'db'],
  measured: ['retrieval', 'domain', 'embedding'],
  preflight: ['db'],
  reembed: ['domain', 'embedding', 'text', 'db'],
  // The core.
  retrieval: ['domain', 'db', 'text', 'filter'],
  portability: ['domain', 'schemas', 'db', 'text', 'filter'],
  webhooks: ['domain', 'db'],
  domain: ['schemas', 'beliefs', 'extraction', 'embedding', 'llm', 'db', 'text', 'filter'],
  // The wire shapes, what the doors validate and answer; the domain types its answers by them.
  schemas: ['filter'],
  // The ports.
  beliefs: ['llm', 'text'],
  extraction: ['llm', 'text'],
  embedding: [],
  llm: [],
  // The bottom.
  db: ['filter'],
  text: [],
  filter: [],
  // The base.
  config: [],
  errors: [],
  logger: [],
  deadline: [],
  version: [],
  vocabulary: [],
};

const mayImport = (from: string, to: string): boolean =>
  from === to || (ALLOWED[from] ?? []).includes(to) || (BASE as readonly string[]).includes(to);

/** The rooms that hold SQL (import kysely or a driver); docs/architecture.md §1 says why the core does. */
const SQL_ROOMS = ['db', 'domain', 'retrieval', 'portability', 'webhooks', 'jobs'];

describe('layers', () => {
  it('every room of src has its row in the table, and every row its room', () => {
    const rooms = new Set(sourceFiles().map(({ file }) => roomOf(file)));
    expect([...rooms].filter((r) => !(r in ALLOWED))).toEqual([]);
    expect(Object.keys(ALLOWED).filter((r) => !rooms.has(r))).toEqual([]);
  });

  it('every import of src follows an allowed edge', () => {
    const wrongWay = imports()
      .filter(({ imported }) => !imported.startsWith('package:'))
      .filter(({ file, imported }) => !mayImport(roomOf(file), roomOf(imported)))
      .map(({ file, imported }) => `${file} → ${imported} (${roomOf(file)} may not import ${roomOf(imported)})`);
    expect(wrongWay).toEqual([]);
  });

  it('the table is a layering: no room reaches back to itself', () => {
    const cycles: string[] = [];
    const visit = (room: string, path: string[]): void => {
      for (const next of ALLOWED[room] ?? []) {
        if (path.includes(next)) cycles.push([...path, next].join(' → '));
        else visit(next, [...path, next]);
      }
    };
    for (const room of Object.keys(ALLOWED)) visit(room, [room]);
    expect(cycles).toEqual([]);
  });

  it('no door imports db', () => {
    for (const door of ['cli', 'app', 'http', 'mcp', 'console', 'adapters', 'access']) {
      expect(ALLOWED[door]).not.toContain('db');
    }
  });

  it('SQL is written only in db and the core', () => {
    const outside = imports()
      .filter(({ imported }) => /^package:(kysely|pg|@electric-sql\/pglite)/u.test(imported))
      .filter(({ file }) => !SQL_ROOMS.includes(roomOf(file)))
      .map(({ file, imported }) => `${file} → ${imported.slice('package:'.length)}`);
    expect(outside).toEqual([]);
    // Nor builds one on a database it was handed (core.db): it calls the core with it.
    const building = sourceFiles()
      .filter(({ file }) => !SQL_ROOMS.includes(roomOf(file)))
      .filter(({ text }) => /\.(selectFrom|insertInto|updateTable|deleteFrom|transaction)\(/u.test(text))
      .map(({ file }) => file);
    expect(building).toEqual([]);
  });
});
