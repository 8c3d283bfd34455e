import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** What tests that start the CLI as a child process share: the command, its environment, a port, a folder. */

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The current source, not a possibly stale dist/: `node --import tsx src/cli/main.ts <command>`. */
export const CLI = [process.execPath, '--import', 'tsx', path.join(ROOT, 'src/cli/main.ts')] as const;

export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The environment of a spawned CLI: only what it needs, so the developer's own settings stay out. */
export function childEnv(extra: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of ['PATH', 'HOME', 'TMPDIR', 'SYSTEMROOT']) {
    const value = process.env[name];
    if (value !== undefined) env[name] = value;
  }
  // A child on the shared test database must not deliver (or fail) other tests' webhooks: the ones
  // that test delivery turn it on (test/webhooks/kill.test.ts).
  return { ...env, EMBEDDER: 'hash', LOG_LEVEL: 'info', WEBHOOK_DISPATCH: 'false', ...extra };
}

/** Resolves with the exit code once the child has exited. */
export function exited(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => child.once('exit', (code) => resolve(code)));
}

export function spawnCli(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(CLI[0], [...CLI.slice(1), ...args], { cwd: ROOT, env, stdio: ['pipe', 'pipe', 'pipe'] });
}
