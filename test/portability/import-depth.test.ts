import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { engine, newTenant, testApi } from '../helpers/harness.js';
import { expectProblem } from '../helpers/problem.js';
import { exportText, importText } from '../helpers/portability.js';

/** `{"a":{"a":...{}}}`, `levels` objects deep, written as text (JSON.stringify would recurse). */
const nested = (levels: number): string => '{"a":'.repeat(levels - 1) + '{}' + '}'.repeat(levels - 1);
const mem0Item = (metadata: string, id = randomUUID()): string =>
  `{"id":"${id}","memory":"fact ${id}","user_id":"ada","metadata":${metadata}}`;

const HEADER = JSON.stringify({ type: 'header', format: 'agent-memory-export', version: 1, embedder: 'any' });
const AT = '2026-01-02T03:04:05.678Z';
const ownMemory = (metadata: string): string =>
  `{"type":"memory","id":"${randomUUID()}","agent_id":"a1","content":"deep","binding":"private","anchor_id":null,` +
  `"session_id":null,"status":"active","confidence":0.7,"decay_rate":0.05,"reinforcement_count":0,` +
  `"superseded_by":null,"metadata":${metadata},"created_at":"${AT}","updated_at":"${AT}",` +
  `"last_reinforced_at":"${AT}","mentioned_in_sessions":[]}`;

const TOO_DEEP = 'metadata must not nest deeper than 32 levels';

describe(`import nesting on ${engine}`, () => {
  it('refuses mem0 metadata past the API limit of 32 levels, however deep, as a 400 naming the memory', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    for (const levels of [33, 40, 5_000, 100_000]) {
      const doc = `[${mem0Item(nested(2))},${mem0Item(nested(levels))}]`;
      const res = await importText(api, t, doc, '?format=mem0', 'application/json');
      expectProblem(res, 400, 'invalid_request');
      expect(res.body.detail).toBe(`line 2: ${TOO_DEEP}`);
      expect(res.body.errors).toEqual([{ path: 'line 2: metadata', message: expect.any(String) }]);
      // The same as one memory a line, and inside { "results": [...] }.
      const lines = await importText(api, t, `${mem0Item('{}')}\n${mem0Item(nested(levels))}\n`, '?format=mem0');
      expectProblem(lines, 400, 'invalid_request');
      expect(lines.body.detail).toMatch(/^line 2: metadata must not nest deeper than 32 levels/);
      const wrapped = `{"results":[${mem0Item('{}')},${mem0Item('{}')},${mem0Item(nested(levels))}]}`;
      const inResults = await importText(api, t, wrapped, '?format=mem0', 'application/json');
      expectProblem(inResults, 400, 'invalid_request');
      expect(inResults.body.detail).toBe(`line 3: ${TOO_DEEP}`);
    }
    // A whole item nested 200,000 deep: refused from its text, before anything walks it.
    const deepItem = '['.repeat(200_000) + ']'.repeat(200_000);
    const item = await importText(api, t, `[${mem0Item('{}')},${deepItem}]`, '?format=mem0', 'application/json');
    expectProblem(item, 400, 'invalid_request');
    expect(item.body.detail).toMatch(/^line 2: /);
  });

  it('takes metadata of exactly 32 levels from mem0, and the export of it imports into another tenant', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const res = await importText(api, t, `[${mem0Item(nested(32))}]`, '?format=mem0', 'application/json');
    expect(res.status).toBe(200);
    expect(res.body.imported.memories).toBe(1);
    const backup = await exportText(api, t);
    const restored = await importText(api, await newTenant(api), backup);
    expect(restored.status).toBe(200);
    expect(restored.body.imported.memories).toBe(1);
  });

  it('refuses deep nesting in our format and the MCP memory file as a 400, never a 500', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    for (const levels of [33, 100_000]) {
      const own = await importText(api, t, `${HEADER}\n${ownMemory(nested(levels))}\n`);
      expectProblem(own, 400, 'invalid_request');
      expect(own.body.detail).toBe(`line 2: ${TOO_DEEP}`);
    }
    const deepField = `{"type":"entity","name":"Ada","observations":["likes tea"],"extra":${nested(100_000)}}`;
    const mcp = await importText(api, t, `${deepField}\n`, '?format=mcp-memory');
    expectProblem(mcp, 400, 'invalid_request');
    expect(mcp.body.detail).toBe('line 1: extra must not nest deeper than 32 levels');
    const deepLine = '['.repeat(200_000) + ']'.repeat(200_000);
    expectProblem(await importText(api, t, `${HEADER}\n${deepLine}\n`), 400, 'invalid_request');
  });
});
