import { randomUUID } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { sweepSpools } from '../../src/http/spool.js';
import { engine, SETUP_TOKEN } from '../helpers/harness.js';
import { childEnv, exited, freePort, spawnCli, tempDir } from '../helpers/cli.js';
import { waitFor } from '../helpers/open-requests.js';

const HOUR_AGO = new Date(Date.now() - 3600_000);

function folder(parent: string, name: string, owner?: object, old = false): string {
  const dir = path.join(parent, name);
  mkdirSync(dir);
  writeFileSync(path.join(dir, 'body'), 'x');
  if (owner) writeFileSync(path.join(dir, 'owner.json'), JSON.stringify(owner));
  if (old) utimesSync(dir, HOUR_AGO, HOUR_AGO);
  return name;
}

/** A process that has exited: its id names no live process (until the system reuses it). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', '']);
  await exited(child);
  return child.pid!;
}

describe('spool folders left behind', () => {
  const children: ChildProcess[] = [];
  const temps: { remove(): void }[] = [];
  afterEach(async () => {
    for (const child of children.splice(0)) {
      child.kill('SIGKILL');
      await exited(child);
    }
    for (const t of temps.splice(0)) t.remove();
  });

  it("are removed when their owner on this host has died or they have gone untouched, never a live owner's", async () => {
    const parent = tempDir('spool-sweep-');
    temps.push(parent);
    const sleeper = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)']);
    children.push(sleeper);
    const host = os.hostname();
    const dead = folder(parent.dir, 'agent-memory-spool-dead', { host, pid: await deadPid() });
    const live = folder(parent.dir, 'agent-memory-spool-live', { host, pid: sleeper.pid });
    // Another host's process ids mean nothing here: only its heartbeat (the folder's age) tells.
    const elsewhere = folder(parent.dir, 'agent-memory-spool-elsewhere', { host: `not-${host}`, pid: 1 });
    const elsewhereOld = folder(parent.dir, 'agent-memory-spool-elsewhere-old', { host: `not-${host}`, pid: 1 }, true);
    // An earlier version's folder (no owner file), and one being made (owner not written yet).
    const legacyOld = folder(parent.dir, 'agent-memory-import-old', undefined, true);
    const starting = folder(parent.dir, 'agent-memory-spool-starting');
    const unrelated = folder(parent.dir, 'something-else', undefined, true);

    const removed = await sweepSpools(parent.dir);
    expect(removed.map((p) => path.basename(p)).sort()).toEqual([dead, elsewhereOld, legacyOld].sort());
    expect(readdirSync(parent.dir).sort()).toEqual([elsewhere, live, starting, unrelated].sort());
  });

  it(
    `are removed when a server killed with SIGKILL mid-import starts again, on ${engine}`,
    { timeout: 240_000 },
    async () => {
      const spool = tempDir('spool-kill-');
      const data = tempDir('spool-kill-data-');
      temps.push(spool, data);
      const port = await freePort();
      const env = childEnv({
        ...(process.env.TEST_DATABASE_URL ? { DATABASE_URL: process.env.TEST_DATABASE_URL } : { DATA_DIR: data.dir }),
        PORT: String(port),
        HOST: '127.0.0.1',
        SETUP_TOKEN,
        SPOOL_DIR: spool.dir,
        LOG_LEVEL: 'warn',
      });
      const base = `http://127.0.0.1:${port}`;
      const start = async (): Promise<ChildProcess> => {
        const child = spawnCli(['serve'], env);
        children.push(child);
        let stderr = '';
        child.stderr?.on('data', (chunk: Buffer) => {
          stderr += chunk.toString();
        });
        await waitFor(async () => {
          if (child.exitCode !== null) throw new Error(`serve exited (${child.exitCode}): ${stderr}`);
          return fetch(`${base}/readyz`).then(
            (r) => r.ok,
            () => false,
          );
        });
        return child;
      };

      const first = await start();
      const setup = await fetch(`${base}/v1/setup`, {
        method: 'POST',
        headers: { 'X-Setup-Token': SETUP_TOKEN, 'Content-Type': 'application/json' },
        body: JSON.stringify({ org_name: `spool-${randomUUID()}` }),
      });
      const key = ((await setup.json()) as { api_key: string }).api_key;
      // An import whose body is still coming when the server is killed.
      const req = http.request(`${base}/v1/import`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${key}`, 'Content-Type': 'application/x-ndjson' },
      });
      req.on('error', () => undefined);
      req.write(`${JSON.stringify({ type: 'header', format: 'agent-memory-export', version: 1, embedder: 'any' })}\n`);
      // Its body is being spooled (the folder, its owner file and the body file are there).
      await waitFor(() => readdirSync(spool.dir).some((name) => existsSync(path.join(spool.dir, name, 'body'))));
      const left = readdirSync(spool.dir);
      first.kill('SIGKILL');
      await exited(first);
      req.destroy();
      expect(readdirSync(spool.dir)).toEqual(left);

      await start();
      expect(readdirSync(spool.dir)).toEqual([]);
    },
  );
});
