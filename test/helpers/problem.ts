import type { Response } from 'supertest';
import { expect } from 'vitest';

/** Asserts an RFC 9457 problem of docs/api.md §2: its status, code, media type and the fields it always has. */
export function expectProblem(res: Response, status: number, code: string): void {
  expect({ status: res.status, body: res.body }).toMatchObject({ status, body: { status, code } });
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(res.body.type).toBe(`https://agent-memory.dev/errors/${code}`);
  expect(res.body.title).toEqual(expect.any(String));
  expect(res.body.detail).toEqual(expect.any(String));
}

/** The fields of a Memory in docs/api.md §3, for checks that a body carries them all and nothing else. */
export const MEMORY_FIELDS = [
  'agent_id',
  'anchor_external_id',
  'anchor_id',
  'binding',
  'confidence',
  'content',
  'created_at',
  'effective_confidence',
  'expires_at',
  'id',
  'last_reinforced_at',
  'metadata',
  'occurred_at',
  'pinned',
  'reinforcement_count',
  'session_id',
  'status',
  'superseded_at',
  'superseded_by',
  'updated_at',
];

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
