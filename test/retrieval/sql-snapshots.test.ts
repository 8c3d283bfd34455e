import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type CompiledQuery,
} from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Database } from '../../src/db/schema.js';
import { subjectIdByExternalId } from '../../src/domain/subjects/anchors.js';
import { candidatesQuery } from '../../src/retrieval/queries/candidates.js';
import { chosenMemoriesQuery } from '../../src/retrieval/queries/fetch.js';
import { boundedExactNearestQuery, exactNearestQuery, nearestQuery } from '../../src/retrieval/queries/nearest.js';
import { checkedFilter } from '../../src/filter/language.js';
import type { RecallScope } from '../../src/retrieval/queries/scope.js';
import { scopeReadStatement } from '../../src/retrieval/queries/scope-read.js';

/**
 * The SQL of every statement recall sends (src/retrieval/queries), compiled from fixed inputs on the
 * Postgres dialect without a connection, against the files committed in __sql__: a change to a
 * statement shows in review as a diff of its SQL, and a statement changed without its file fails here.
 */
const DIR = join(dirname(fileURLToPath(import.meta.url)), '__sql__');
const UPDATE = process.env.UPDATE_SQL_SNAPSHOTS === '1';
const HOW_TO_UPDATE =
  'UPDATE_SQL_SNAPSHOTS=1 npx vitest run --project fast test/retrieval/sql-snapshots.test.ts, then review and commit the diff';

const db = new Kysely<Database>({
  dialect: {
    createAdapter: () => new PostgresAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (k) => new PostgresIntrospector(k),
    createQueryCompiler: () => new PostgresQueryCompiler(),
  },
});

const tenantId = '00000000-0000-4000-8000-000000000001';
const dimensions = 3;
const embedding = new Float32Array([0.5, 0.25, 0.125]);
const text = 'Where did Caroline move from, four years ago?';
const unanchored: RecallScope = {
  tenantId,
  agentId: 'agent-1',
  anchorId: null,
  sessionId: null,
  includeSuperseded: false,
};
const inSession: RecallScope = {
  tenantId,
  agentId: 'agent-1',
  anchorId: '00000000-0000-4000-8000-000000000002',
  sessionId: '00000000-0000-4000-8000-000000000003',
  mentioned: {
    memoryIds: ['00000000-0000-4000-8000-000000000004'],
    formedIn: ['00000000-0000-4000-8000-000000000005'],
  },
  includeSuperseded: false,
};
const stats = { docs: 250_000, totalLen: 2_500_000 };
const part = { db, dimensions, scope: inSession, part: 'subject' as const, stats, text, embedding, depth: 50 };

/** A filter with every kind of condition (docs/api.md, "Filters"): where it lands in each statement. */
const filter = checkedFilter({
  'metadata.topic': { $in: ['billing', 'refunds'] },
  $or: [{ 'metadata.priority': { $gte: 2 } }, { 'metadata.note': { $lt: '2025-01-01' } }],
  $not: { binding: 'canon' },
  'metadata.resolved': { $exists: false },
  occurred_at: { $gte: '2025-01-01T00:00:00Z' },
  pinned: { $ne: true },
});
const filtered = { ...part, scope: { ...inSession, filter } };

/** Each statement recall sends, in the order a recall sends them, by its snapshot's name. */
const STATEMENTS: Record<string, () => CompiledQuery<unknown>> = {
  // A subject named by external id alone: the first statement of the most common recall.
  'scope-read-named-subject': () =>
    scopeReadStatement({
      db,
      dimensions,
      toRead: { scope: unanchored, named: subjectIdByExternalId(tenantId, 'user-1') },
      parts: ['subject', 'canon'],
      text,
      embedding,
    }).compile(db),
  'scope-read-session': () =>
    scopeReadStatement({
      db,
      dimensions,
      toRead: { scope: inSession },
      parts: ['subject', 'canon'],
      text,
      embedding,
    }).compile(db),
  'nearest-hnsw': () => nearestQuery(part).compile(),
  'nearest-exact': () => exactNearestQuery(part).compile(),
  // Under a filter: the scope read with it, and the exact side of a large part's vector search.
  'scope-read-filtered': () =>
    scopeReadStatement({
      db,
      dimensions,
      toRead: { scope: filtered.scope },
      parts: ['subject', 'canon'],
      text,
      embedding,
    }).compile(db),
  'nearest-exact-filtered': () => boundedExactNearestQuery(filtered, 20_000).compile(),
  candidates: () =>
    candidatesQuery({
      ...part,
      nearest: ['00000000-0000-4000-8000-000000000006', '00000000-0000-4000-8000-000000000007'],
    }).compile(db),
  'chosen-memories': () =>
    chosenMemoriesQuery({
      db,
      tenantId,
      ids: ['00000000-0000-4000-8000-000000000006', '00000000-0000-4000-8000-000000000004'],
    }).compile(),
};

/** One clause a line where the query builder wrote them on one (its keywords are lower case). */
const layout = (statement: string): string =>
  statement
    .replace(/ (from|where|order by|limit|union all|inner join|left join|cross join lateral) /g, '\n  $1 ')
    .split('\n')
    .map((line) => line.trimEnd())
    .join('\n');

const shown = (value: unknown): string => {
  const s = JSON.stringify(value);
  return s.length > 120 ? `${s.slice(0, 117)}...` : s;
};

function render(name: string, query: CompiledQuery<unknown>): string {
  return [
    `-- ${name}: compiled by test/retrieval/sql-snapshots.test.ts from its fixed input; do not edit.`,
    layout(query.sql),
    '',
    '-- parameters',
    ...query.parameters.map((p, i) => `-- $${i + 1} = ${shown(p)}`),
    '',
  ].join('\n');
}

describe('the SQL recall sends', () => {
  it.each(Object.keys(STATEMENTS))('%s matches its committed snapshot', (name) => {
    const file = join(DIR, `${name}.sql`);
    const actual = render(name, (STATEMENTS[name] as () => CompiledQuery<unknown>)());
    if (UPDATE) {
      mkdirSync(DIR, { recursive: true });
      writeFileSync(file, actual);
      return;
    }
    const committed = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
    expect(committed, `${file} is missing; write it with ${HOW_TO_UPDATE}`).toBeDefined();
    expect(actual, `the SQL of ${name} changed: ${HOW_TO_UPDATE}`).toBe(committed);
  });

  it('has a statement for every snapshot file', () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith('.sql'));
    expect(files.map((f) => f.slice(0, -4)).sort(), `remove the snapshots of statements that are gone`).toEqual(
      Object.keys(STATEMENTS).sort(),
    );
  });
});
