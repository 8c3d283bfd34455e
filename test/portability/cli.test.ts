import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { engine } from '../helpers/harness.js';
import { isolatedDatabase, type IsolatedDb } from '../helpers/isolated-db.js';
import { childEnv, exited, spawnCli, tempDir } from '../helpers/cli.js';
import { sortedLines } from '../helpers/portability.js';

const FIXTURE = path.join(path.dirname(new URL(import.meta.url).pathname), 'fixtures/mcp-memory.jsonl');

async function run(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnCli(args, childEnv({ LOG_LEVEL: 'silent', ...env }));
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdin?.end();
  const code = await exited(child);
  return { code, stdout, stderr };
}

describe(`agent-memory export and import on ${engine}`, () => {
  const dbs: IsolatedDb[] = [];
  const files = tempDir('agent-memory-port-');
  afterAll(async () => {
    for (const db of dbs) await db.drop();
    files.remove();
  });

  it('imports a file with a progress bar, exports it, and a second database re-exports it identically', async () => {
    const source = await isolatedDatabase();
    const target = await isolatedDatabase();
    dbs.push(source, target);

    const imported = await run(['import', FIXTURE, '--format', 'mcp-memory', '--agent-id', 'claude'], source.env);
    expect(imported.code).toBe(0);
    expect(JSON.parse(imported.stdout)).toMatchObject({ lines: 5, imported: { anchors: 3, memories: 6 } });
    expect(imported.stderr).toMatch(/import \[#+\] \d+\/\d+/);

    const out = path.join(files.dir, 'export.ndjson');
    const exported = await run(['export', '--out', out], source.env);
    expect(exported.code).toBe(0);
    expect(exported.stderr).toMatch(/export \[#+\] 9\/9/);
    expect(exported.stderr).toContain('exported 3 anchors, 0 sessions, 6 memories, 0 canon entries');
    const first = readFileSync(out, 'utf8');

    expect((await run(['import', out], target.env)).code).toBe(0);
    const again = await run(['export'], target.env);
    expect(again.code).toBe(0);
    expect(sortedLines(again.stdout)).toEqual(sortedLines(first));

    const missing = await run(['import', path.join(files.dir, 'nothing-here.ndjson')], target.env);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('cannot read');
    // Five processes, each starting its database: minutes on a busy machine, not seconds.
  }, 300_000);
});
