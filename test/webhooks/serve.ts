import type { ChildProcess } from 'node:child_process';
import { SETUP_TOKEN } from '../helpers/harness.js';
import { childEnv, exited, spawnCli } from '../mcp/helpers.js';

const START_TIMEOUT_MS = 90_000;

/** An `agent-memory serve` child that a test can kill with SIGKILL and start again on the same database. */
export class ServeProcess {
  private child: ChildProcess | undefined;
  stderr = '';

  constructor(
    readonly port: number,
    private readonly env: Record<string, string>,
  ) {}

  get base(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(extra: Record<string, string> = {}): Promise<void> {
    this.stderr = '';
    const child = spawnCli(
      ['serve'],
      childEnv({
        PORT: String(this.port),
        HOST: '127.0.0.1',
        SETUP_TOKEN,
        RATE_LIMIT_PER_MINUTE: '0',
        LOG_LEVEL: 'warn',
        WEBHOOK_ALLOW_PRIVATE: 'true',
        WEBHOOK_DISPATCH: 'true',
        ...this.env,
        ...extra,
      }),
    );
    this.child = child;
    child.stderr?.on('data', (chunk: Buffer) => {
      this.stderr += chunk.toString();
    });
    child.stdout?.resume();
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`serve exited (${child.exitCode}); stderr:\n${this.stderr}`);
      try {
        if ((await fetch(`${this.base}/readyz`)).ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`serve did not become ready; stderr:\n${this.stderr}`);
  }

  /** SIGKILL: no handler runs; what was committed is all that remains. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = exited(child);
    child.kill('SIGKILL');
    await gone;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = exited(child);
    child.kill('SIGTERM');
    await gone;
  }

  async call(
    method: string,
    path: string,
    auth: string | undefined,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await fetch(`${this.base}${path}`, {
      method,
      headers: {
        ...(body === undefined ? {} : { 'Content-Type': 'application/json' }),
        ...(auth ? { Authorization: `Bearer ${auth}` } : {}),
        ...(path === '/v1/setup' ? { 'X-Setup-Token': SETUP_TOKEN } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }
}
