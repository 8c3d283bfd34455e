import { spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  answersIn,
  lastJsonValue,
  parseShape,
  shapeDifferences,
  walkthroughScript,
} from '../helpers/readme-walkthrough.js';
import { citusDatabase } from '../helpers/citus.js';
import { isolatedDatabase, type IsolatedDb } from '../helpers/isolated-db.js';
import { childEnv, exited, freePort, ROOT, spawnCli, tempDir } from '../helpers/cli.js';

/**
 * The README's walk-through, read from the README itself (its `sh walkthrough` blocks) and run with
 * bash against a fresh `serve`, as a person pasting the blocks in order would: every command must
 * succeed, and every answer must have the keys its `# {…}` line shows. The server embeds with `hash`
 * (childEnv): the answers' shapes do not depend on the embedder, and it starts without loading a model.
 */

const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const START_TIMEOUT_MS = 120_000;

/**
 * With CITUS_TEST_URL, against a database distributed over that cluster (docs/scale-out.md#citus):
 * made on every node, then `agent-memory migrate --citus` as an operator runs it, then `serve`.
 */
const citusUrl = process.env.CITUS_TEST_URL;

async function distributedDatabase(coordinatorUrl: string): Promise<IsolatedDb> {
  const cluster = await citusDatabase(coordinatorUrl);
  const env = { DATABASE_URL: cluster.url };
  const migrate = spawnCli(['migrate', '--citus'], childEnv(env));
  let output = '';
  migrate.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const code = await exited(migrate);
  if (code !== 0) {
    await cluster.drop();
    throw new Error(`migrate --citus exited (${code}):\n${output}`);
  }
  return { env, drop: () => cluster.drop() };
}

describe(`the README walk-through${citusUrl ? ', on a Citus cluster' : ''}`, () => {
  let db: IsolatedDb;
  let server: ChildProcess;
  let stderr = '';
  let base = '';
  const work = tempDir('agent-memory-walkthrough-');

  beforeAll(async () => {
    // The token the README starts the server with, so that its setup call is the one it shows.
    const token = /^SETUP_TOKEN=(\S+) npm start$/m.exec(README)?.[1];
    if (!token) throw new Error('the README does not start the server with SETUP_TOKEN=… npm start');
    db = citusUrl ? await distributedDatabase(citusUrl) : await isolatedDatabase();
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    server = spawnCli(['serve'], childEnv({ ...db.env, PORT: String(port), HOST: '127.0.0.1', SETUP_TOKEN: token }));
    server.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    for (;;) {
      if (server.exitCode !== null) throw new Error(`serve exited (${server.exitCode}):\n${stderr}`);
      const ready = await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      await new Promise((r) => setTimeout(r, 250));
    }
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await exited(server);
    }
    await db?.drop();
    work.remove();
  });

  it('runs as written, and every answer has the shape the README shows', () => {
    expect(spawnSync('jq', ['--version']).status, 'the walk-through needs jq on the PATH').toBe(0);
    const { script, shapes } = walkthroughScript(README, base);
    expect(shapes.length).toBeGreaterThan(10);
    const run = spawnSync('bash', ['-c', script], {
      cwd: work.dir,
      env: childEnv({}),
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(run.status, `the walk-through failed:\n${run.stderr}\n${run.stdout}`).toBe(0);
    const answers = answersIn(run.stdout, shapes.length);
    const problems = shapes.flatMap((shape, n) => {
      const found = shapeDifferences(parseShape(shape), lastJsonValue(answers[n] ?? ''));
      return found.length === 0 ? [] : [`answer ${n + 1}, README: ${shape}\n  ${found.join('\n  ')}`];
    });
    expect(problems).toEqual([]);
  });
});
