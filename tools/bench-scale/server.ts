import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../bin/agent-memory.js');
const RSS_EVERY_MS = 250;

export interface Server {
  url: string;
  /** Peak resident memory of the server process so far, in MiB. */
  peakRssMb(): number;
  stop(): Promise<void>;
}

/** VmRSS of a process in MiB, or undefined where /proc is not there (or the process is gone). */
function rssMb(pid: number): number | undefined {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = /^VmRSS:\s+(\d+)\s+kB/m.exec(status)?.[1];
    return kb === undefined ? undefined : Number(kb) / 1024;
  } catch {
    return undefined;
  }
}

async function waitReady(url: string, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server exited with code ${child.exitCode} before it was ready`);
    try {
      const response = await fetch(`${url}/readyz`);
      if (response.status === 200) return;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`the server was not ready within ${timeoutMs / 1000} s`);
}

/** `agent-memory serve` (the built CLI) as a child process on 127.0.0.1:port, ready when this resolves. */
export async function startServer(env: Record<string, string>, port: number): Promise<Server> {
  if (!fs.existsSync(path.resolve(path.dirname(CLI), '../dist/cli/main.js'))) {
    throw new Error('the built CLI is missing: run `npm run build` first');
  }
  const child = spawn(process.execPath, [CLI, 'serve'], {
    env: { ...process.env, ...env, HOST: '127.0.0.1', PORT: String(port) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  let peak = 0;
  const sample = () => {
    const rss = child.pid === undefined ? undefined : rssMb(child.pid);
    if (rss !== undefined) peak = Math.max(peak, rss);
  };
  const timer = setInterval(sample, RSS_EVERY_MS);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  try {
    // Starting runs migrations and, on the embedded engine, ANALYZE over the whole dataset.
    await waitReady(url, child, 600_000);
  } catch (error) {
    clearInterval(timer);
    child.kill('SIGTERM');
    throw error;
  }
  return {
    url,
    peakRssMb: () => {
      sample();
      return Math.round(peak);
    },
    stop: async () => {
      clearInterval(timer);
      if (child.exitCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}
