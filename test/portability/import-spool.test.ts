import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../src/app.js';
import type { Embedder } from '../../src/embedding/embedder.js';
import { createHttpServer } from '../../src/http/server.js';
import { engine, newTenant, testApi, testCore } from '../helpers/harness.js';

/** The worker's embedder, with its first call held for `ms`: an import that starts slowly. */
function slowFirst(embedder: Embedder, ms: number): Embedder {
  let first = true;
  return {
    ...embedder,
    embed: async (texts, options) => {
      if (first) {
        first = false;
        await new Promise((resolve) => setTimeout(resolve, ms));
      }
      return embedder.embed(texts, options);
    },
  };
}

describe(`POST /v1/import of a large body on ${engine}`, () => {
  it('is not cut by HTTP_REQUEST_TIMEOUT_MS when importing takes longer than receiving', async () => {
    const limits = { HTTP_REQUEST_TIMEOUT_MS: '1000', HTTP_HEADERS_TIMEOUT_MS: '1000' };
    const setupApi = await testApi();
    const t = await newTenant(setupApi);
    const base = await testCore({ config: limits });
    const core = { ...base, embedder: slowFirst(base.embedder, 2500) };
    const server = createHttpServer(createApp(core), core.config.httpLimits).listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    try {
      const at = '2026-01-02T03:04:05.678Z';
      const header = { type: 'header', format: 'agent-memory-export', version: 1, embedder: 'any' };
      const lines = [JSON.stringify(header)];
      // About 600 kB: far more than the stream buffers, so an import that read the body only as fast
      // as it writes would leave most of it unreceived when the timeout strikes.
      for (let i = 0; i < 300; i++) {
        lines.push(
          JSON.stringify({
            type: 'memory',
            id: randomUUID(),
            agent_id: 'agent-1',
            content: `fact ${i} ${'lorem '.repeat(300)}`,
            binding: 'private',
            anchor_id: null,
            session_id: null,
            status: 'active',
            confidence: 0.7,
            decay_rate: 0.05,
            reinforcement_count: 0,
            superseded_by: null,
            metadata: {},
            created_at: at,
            updated_at: at,
            last_reinforced_at: at,
            mentioned_in_sessions: [],
          }),
        );
      }
      const { port } = server.address() as AddressInfo;
      const res = await fetch(`http://127.0.0.1:${port}/v1/import`, {
        method: 'POST',
        headers: { ...t.auth, 'Content-Type': 'application/x-ndjson' },
        body: `${lines.join('\n')}\n`,
      });
      expect(res.status).toBe(200);
      expect(((await res.json()) as { imported: { memories: number } }).imported.memories).toBe(300);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
