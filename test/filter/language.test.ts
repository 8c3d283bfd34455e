import { describe, expect, it } from 'vitest';
import { FILTER_MAX_CONDITIONS, FILTER_MAX_DEPTH, parseFilter } from '../../src/filter/language.js';

const issue = (input: unknown) => {
  const parsed = parseFilter(input);
  if (parsed.ok) throw new Error(`accepted ${JSON.stringify(input)}`);
  return parsed.issue;
};

describe('the filter language', () => {
  it('reads a value as $eq, several keys and operators as $and, and {} as no filter', () => {
    expect(parseFilter({ 'metadata.topic': 'billing' })).toEqual({
      ok: true,
      filter: { op: 'eq', field: { kind: 'metadata', key: 'topic' }, value: 'billing' },
    });
    expect(parseFilter({ 'metadata.n': { $gte: 1, $lt: 5 }, pinned: true })).toEqual({
      ok: true,
      filter: {
        op: 'and',
        of: [
          {
            op: 'and',
            of: [
              { op: 'gte', field: { kind: 'metadata', key: 'n' }, value: 1 },
              { op: 'lt', field: { kind: 'metadata', key: 'n' }, value: 5 },
            ],
          },
          { op: 'eq', field: { kind: 'builtin', name: 'pinned' }, value: true },
        ],
      },
    });
    expect(parseFilter({})).toEqual({ ok: true, filter: null });
    expect(parseFilter(undefined)).toEqual({ ok: true, filter: null });
    // A metadata key is everything after "metadata.", dots included.
    expect(parseFilter({ 'metadata.a.b': { $exists: true } })).toMatchObject({
      filter: { op: 'exists', field: { key: 'a.b' }, value: true },
    });
  });

  it('names the path of what is wrong', () => {
    expect(issue({ 'metadata.topic': { $regex: 'bill' } })).toEqual({
      path: ['metadata.topic', '$regex'],
      message: expect.stringContaining('unknown operator $regex'),
    });
    expect(issue({ $and: [{ 'metadata.a': 1 }, { 'metadata.b': { $gt: true } }] }).path).toEqual([
      '$and',
      1,
      'metadata.b',
      '$gt',
    ]);
    expect(issue({ $or: [{ topic: 'x' }] })).toEqual({
      path: ['$or', 0, 'topic'],
      message: expect.stringContaining('unknown field'),
    });
    expect(issue({ $nor: [] }).path).toEqual(['$nor']);
    expect(issue({ $and: [] }).path).toEqual(['$and']);
    expect(issue({ $not: [{ pinned: true }] }).path).toEqual(['$not']);
    expect(issue({ 'metadata.a': null }).message).toContain('$exists');
    expect(issue({ 'metadata.a': ['x'] }).message).toContain('$in');
    expect(issue({ 'metadata.a': { $in: [] } }).path).toEqual(['metadata.a', '$in']);
    expect(issue({ 'metadata.a': { $in: ['x', { y: 1 }] } }).path).toEqual(['metadata.a', '$in', 1]);
    expect(issue({ 'metadata.a': { $exists: 'yes' } }).path).toEqual(['metadata.a', '$exists']);
    expect(issue({ 'metadata.': 1 }).path).toEqual(['metadata.']);
    expect(issue({ $eq: 1 }).message).toContain('applies to a field');
    expect(issue('billing')).toEqual({ path: [], message: 'must be a JSON object, not string' });
    expect(issue({ 'metadata.a': {} }).path).toEqual(['metadata.a']);
    expect(issue({ 'metadata.a': { nested: 1 } }).path).toEqual(['metadata.a', 'nested']);
  });

  it('checks the built-in fields by their types', () => {
    expect(issue({ binding: 'public' }).message).toContain('private, anchored, session, canon');
    expect(issue({ pinned: 'true' }).path).toEqual(['pinned']);
    expect(issue({ agent_id: 7 }).path).toEqual(['agent_id']);
    expect(issue({ agent_id: { $gt: 'a' } }).path).toEqual(['agent_id', '$gt']);
    expect(issue({ created_at: { $gte: 'yesterday' } }).message).toContain('ISO-8601');
    expect(issue({ occurred_at: { $lt: 1700000000 } }).path).toEqual(['occurred_at', '$lt']);
    expect(issue({ occurred_at: { $exists: true } }).message).toContain('metadata keys');
    expect(parseFilter({ occurred_at: { $gte: '2025-01-01', $lt: '2025-02-01T00:00:00+01:00' } }).ok).toBe(true);
    expect(parseFilter({ binding: { $in: ['private', 'canon'] }, pinned: { $ne: true } }).ok).toBe(true);
  });

  it(`refuses a filter deeper than ${FILTER_MAX_DEPTH} levels, and says where`, () => {
    const nest = (levels: number): Record<string, unknown> =>
      levels === 1 ? { 'metadata.a': 1 } : { $not: nest(levels - 1) };
    expect(parseFilter(nest(FILTER_MAX_DEPTH)).ok).toBe(true);
    const deep = issue(nest(FILTER_MAX_DEPTH + 1));
    expect(deep.path).toEqual(Array.from({ length: FILTER_MAX_DEPTH }, () => '$not'));
    expect(deep.message).toContain(`deeper than ${FILTER_MAX_DEPTH}`);
  });

  it(`refuses more than ${FILTER_MAX_CONDITIONS} conditions, counting each $in value`, () => {
    const values = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`);
    expect(parseFilter({ 'metadata.a': { $in: values(FILTER_MAX_CONDITIONS) } }).ok).toBe(true);
    expect(issue({ 'metadata.a': { $in: values(FILTER_MAX_CONDITIONS + 1) } }).path).toEqual(['metadata.a', '$in']);
    const many = Object.fromEntries(values(FILTER_MAX_CONDITIONS + 1).map((v) => [`metadata.${v}`, 1]));
    expect(issue(many)).toEqual({
      path: [`metadata.v${FILTER_MAX_CONDITIONS}`],
      message: expect.stringContaining(`more than ${FILTER_MAX_CONDITIONS} conditions`),
    });
  });
});
