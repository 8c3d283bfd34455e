import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockDataDir } from '../../src/db/data-dir-lock.js';
import { openPglite } from '../../src/db/connect.js';

const tempDir = () => fs.mkdtempSync(path.join(os.tmpdir(), 'agent-memory-lock-'));

describe('the embedded data folder lock', () => {
  it('refuses a folder held by a running process', () => {
    const dir = tempDir();
    // The parent of this test process runs for as long as the test does.
    fs.writeFileSync(path.join(dir, 'agent-memory.lock'), `${process.ppid}\n`);
    expect(() => lockDataDir(dir)).toThrow(/is in use by process \d+/);
  });

  it('takes over a lock left by a process that no longer runs, and releases it', () => {
    const dir = tempDir();
    const file = path.join(dir, 'agent-memory.lock');
    fs.writeFileSync(file, '2147483646\n');
    const release = lockDataDir(dir);
    expect(fs.readFileSync(file, 'utf8').trim()).toBe(String(process.pid));
    release();
    expect(fs.existsSync(file)).toBe(false);
  });

  it('is held by an open embedded database until it is closed', async () => {
    const dir = tempDir();
    const handle = await openPglite(dir);
    expect(fs.readFileSync(path.join(dir, 'agent-memory.lock'), 'utf8').trim()).toBe(String(process.pid));
    await handle.close();
    expect(fs.existsSync(path.join(dir, 'agent-memory.lock'))).toBe(false);
  });
});
