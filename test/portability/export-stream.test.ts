import v8 from 'node:v8';
import vm from 'node:vm';
import { describe, expect, it } from 'vitest';
import { exportTenant } from '../../src/portability/export.js';
import { seedMemories } from '../../tools/portability/seed.js';
import { engine, newTenant, testApi } from '../helpers/harness.js';

const MIB = 1024 * 1024;

/** V8's collector, to measure what is retained rather than garbage not yet collected. */
function collector(): () => void {
  v8.setFlagsFromString('--expose-gc');
  return vm.runInNewContext('gc') as () => void;
}

describe(`GET /v1/export streaming on ${engine}`, () => {
  it('streams a tenant far larger than what it holds at once, from one snapshot', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const count = 2000;
    const contentChars = 8000;
    await seedMemories(api.core.db, t.tenantId, {
      count,
      contentChars,
      dimensions: api.core.embedder.dimensions,
      embedderId: api.core.embedder.id,
    });

    const gc = collector();
    gc();
    const before = process.memoryUsage().heapUsed;
    let peak = before;
    let lines = 0;
    let bytes = 0;
    let lateWrite: Promise<unknown> | undefined;
    await exportTenant(api.core, t.tenantId, { audit: false }, (line) => {
      lines++;
      bytes += line.length;
      if (lines % 250 === 0) {
        gc();
        peak = Math.max(peak, process.memoryUsage().heapUsed);
      }
      // A store that lands while the export runs is not in it: the export reads one snapshot.
      // (Not awaited: on the embedded database it waits for the export's one connection.)
      if (lines === 10)
        lateWrite = api.http.post('/v1/memories').set(t.auth).send({ agent_id: 'late', content: 'stored meanwhile' });
      return Promise.resolve();
    });
    expect(lines).toBe(count + 2);
    // What the export holds at any time (one page of rows) is a small part of what it writes.
    expect(bytes).toBeGreaterThan(count * contentChars);
    expect(peak - before).toBeLessThan(Math.min(bytes / 3, 8 * MIB));

    expect((await lateWrite) as { status: number }).toMatchObject({ status: 201 });
    const after = await exportTenant(api.core, t.tenantId, { audit: false }, () => Promise.resolve());
    expect(after.memories).toBe(count + 1);
  });
});
