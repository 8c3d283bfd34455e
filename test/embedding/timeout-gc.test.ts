import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SCRIPT = fileURLToPath(new URL('../helpers/gc-timeouts.ts', import.meta.url));
const TIMEOUT_MS = 300;
/** Far beyond two attempts and a backoff, far below "never". */
const CEILING_MS = 10_000;

interface Ended {
  name: string;
  ms: number;
  message: string;
}

/** The calls of the child script, run with garbage collection forced while they hang. */
function runUnderGc(): Promise<Ended[]> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', SCRIPT, String(TIMEOUT_MS)],
      // A call that never ends keeps the child alive: it is killed past the ceiling of all of them.
      { timeout: 5 * CEILING_MS, killSignal: 'SIGKILL' },
      (error, stdout, stderr) => {
        const ended = stdout
          .split('\n')
          .filter((line) => line.startsWith('{'))
          .map((line) => JSON.parse(line) as Ended);
        if (error && ended.length === 0) reject(new Error(`${error.message}\n${stderr}`));
        else resolve(ended);
      },
    );
  });
}

describe('timeouts under garbage collection', () => {
  it('every network call against a server that never answers ends with its timeout', { timeout: 120_000 }, async () => {
    const ended = await runUnderGc();
    expect(ended.map((e) => e.name)).toEqual(['openai', 'voyage', 'ollama', 'judge', 'extractor']);
    for (const e of ended.slice(0, 3)) {
      expect(e.message).toBe(`${e.name} embedder: no answer within ${TIMEOUT_MS} ms (after 2 attempts)`);
    }
    expect(ended[3]?.message).toBe('no judgement');
    expect(ended[4]?.message).toBe('extraction failed: timeout');
    for (const e of ended) {
      expect(e.ms, e.name).toBeGreaterThanOrEqual(TIMEOUT_MS - 50);
      expect(e.ms, e.name).toBeLessThan(CEILING_MS);
    }
  });
});
