import { existsSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { childEnv, exited, freePort, spawnCli, tempDir } from '../helpers/cli.js';

/**
 * `agent-memory serve`'s first seconds, as a newcomer meets them: a port or a data folder it cannot
 * use is told in one line before the database opens and the model loads, and the start log says
 * where the console and the API reference are.
 */

const TIMEOUT_MS = 120_000;
const data = tempDir('agent-memory-serve-start-');
afterAll(() => data.remove());

/** Runs `serve` to its exit; stdout and stderr together, as a terminal shows them. */
async function serveFails(env: Record<string, string>): Promise<{ code: number | null; output: string; ms: number }> {
  const started = performance.now();
  const child = spawnCli(['serve'], env);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await exited(child);
  return { code, output, ms: performance.now() - started };
}

describe('agent-memory serve, before it opens anything', () => {
  it(
    'says in one line that the port is taken, without opening the database or loading the model',
    async () => {
      const holder = createServer();
      const port = await freePort();
      await new Promise<void>((resolve) => holder.listen(port, '127.0.0.1', resolve));
      try {
        // The folder does not exist yet: had the database been opened, it would.
        const folder = path.join(data.dir, 'never-opened');
        // The local model, as a newcomer runs it: loading it alone takes seconds.
        const run = await serveFails(childEnv({ DATA_DIR: folder, PORT: String(port), EMBEDDER: 'local' }));
        expect(run.code).toBe(1);
        expect(run.output).toBe(
          `agent-memory: port ${port} on 127.0.0.1 is already in use (another agent-memory serve?): ` +
            `stop that process, or set PORT to a free port, e.g. PORT=${port + 1}\n`,
        );
        expect(existsSync(folder)).toBe(false);
        console.info(`taken port told after ${Math.round(run.ms)} ms`);
      } finally {
        holder.close();
      }
    },
    TIMEOUT_MS,
  );

  it(
    'says in one line that the data folder cannot be used, and what to set',
    async () => {
      const file = path.join(data.dir, 'a-file');
      writeFileSync(file, 'not a folder');
      const port = await freePort();
      for (const folder of [file, path.join(file, 'below')]) {
        const run = await serveFails(childEnv({ DATA_DIR: folder, PORT: String(port) }));
        expect(run.code).toBe(1);
        expect(run.output).toBe(
          `agent-memory: the data folder ${folder} (DATA_DIR) cannot be used: it, or a folder on its path, is a file. ` +
            'Set DATA_DIR to a folder this user can write (it is created if missing), or set DATABASE_URL to use PostgreSQL instead.\n',
        );
      }
    },
    TIMEOUT_MS,
  );
});

describe('agent-memory serve, once it listens', () => {
  it(
    'names the console, the API reference and /mcp in its start log',
    async () => {
      const port = await freePort();
      const child = spawnCli(['serve'], childEnv({ DATA_DIR: path.join(data.dir, 'served'), PORT: String(port) }));
      let err = '';
      const line = await new Promise<string>((resolve, reject) => {
        child.stderr?.on('data', (chunk: Buffer) => {
          err += chunk.toString();
          const found = err.split('\n').find((l) => l.includes('agent-memory listening on'));
          if (found) resolve(found);
        });
        child.stdout?.on('data', (chunk: Buffer) => {
          err += chunk.toString();
          const found = err.split('\n').find((l) => l.includes('agent-memory listening on'));
          if (found) resolve(found);
        });
        child.once('exit', (code) => reject(new Error(`serve exited (${code}):\n${err}`)));
      });
      const base = `http://127.0.0.1:${port}`;
      const entry = JSON.parse(line) as { msg: string; console: string; docs: string };
      expect(entry.msg).toBe(
        `agent-memory listening on ${base}: console ${base}/console/, API reference ${base}/docs, MCP ${base}/mcp`,
      );
      expect(entry).toMatchObject({ console: `${base}/console/`, docs: `${base}/docs` });
      // The links work.
      expect((await fetch(entry.console)).status).toBe(200);
      expect((await fetch(entry.docs)).status).toBe(200);
      const exit = exited(child);
      child.kill('SIGTERM');
      expect(await exit).toBe(0);
    },
    TIMEOUT_MS,
  );
});
