import type { ChildProcess } from 'node:child_process';
import { childEnv, exited, freePort, spawnCli } from './cli.js';
import { SETUP_TOKEN } from './harness.js';

/** Long enough for a process that migrates its database on a busy machine. */
const START_TIMEOUT_MS = 120_000;
/**
 * One look at /readyz. Bounded, because what listens on the port may not be this process: the port
 * was free when chosen, and another listener of the test (a webhook receiver on port 0) can take it
 * before `serve` binds it. Unbounded, such a look waited out the test on a listener that never answers.
 */
const PROBE_TIMEOUT_MS = 2_000;
/** How often a start moves to a fresh port when the one it had was taken meanwhile. */
const PORT_RETRIES = 3;

/**
 * An `agent-memory serve` child process on 127.0.0.1, for tests of what a real process does when it
 * is killed and started again on the same database: `start` returns once `/readyz` answers, `kill`
 * sends SIGKILL (no handler runs, what was committed is all that remains), `stop` SIGTERM.
 * `env` names the database (DATABASE_URL or DATA_DIR) and what the test sets for every start.
 */
export class ServeProcess {
  private child: ChildProcess | undefined;
  /** What the current process wrote to stderr: the error messages of the helper quote it. */
  stderr = '';

  constructor(
    private currentPort: number,
    private readonly env: Record<string, string>,
  ) {}

  /** The port of the current process: a start moves to a fresh one if another listener took it. */
  get port(): number {
    return this.currentPort;
  }

  get base(): string {
    return `http://127.0.0.1:${this.currentPort}`;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null && this.child.signalCode === null;
  }

  /**
   * Starts the process with `extra` over the constructor's environment, and waits until it is ready.
   * If the port was taken since it was chosen, `serve` says so and exits: the start moves to a fresh
   * port rather than failing on a race of the test's own making.
   */
  async start(extra: Record<string, string> = {}): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      const outcome = await this.startOnce(extra);
      if (outcome === 'ready') return;
      if (attempt === PORT_RETRIES) throw new Error(`serve found port ${this.currentPort} taken ${attempt + 1} times`);
      this.currentPort = await freePort();
    }
  }

  private async startOnce(extra: Record<string, string>): Promise<'ready' | 'port taken'> {
    this.stderr = '';
    const child = spawnCli(
      ['serve'],
      childEnv({
        PORT: String(this.currentPort),
        HOST: '127.0.0.1',
        SETUP_TOKEN,
        RATE_LIMIT_PER_MINUTE: '0',
        LOG_LEVEL: 'warn',
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
      if (child.exitCode !== null) {
        if (this.stderr.includes('is already in use')) return 'port taken';
        throw new Error(`serve exited (${child.exitCode}); stderr:\n${this.stderr}`);
      }
      try {
        const res = await fetch(`${this.base}/readyz`, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
        // An answer after this child exited came from another listener.
        if (res.ok && child.exitCode === null) return 'ready';
      } catch {
        // not listening yet, or a listener that is not this process
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`serve did not become ready; stderr:\n${this.stderr}`);
  }

  /** SIGKILL: no handler runs, open transactions die with their connections, leases are left to run out. */
  async kill(): Promise<void> {
    await this.signal('SIGKILL');
  }

  /** SIGTERM: the process shuts down as it does when an operator stops it. */
  async stop(): Promise<void> {
    await this.signal('SIGTERM');
  }

  private async signal(signal: NodeJS.Signals): Promise<void> {
    const child = this.child;
    if (!child || !this.running) return;
    const gone = exited(child);
    child.kill(signal);
    await gone;
  }

  /** A request to the process; a failed connection says whether the process still runs and what it wrote. */
  async fetch(path: string, init: RequestInit = {}): Promise<Response> {
    return fetch(`${this.base}${path}`, init).catch((error: unknown) => {
      const child = this.child;
      throw new Error(
        `${init.method ?? 'GET'} ${path}: ${String(error)} (serve: ${String(child?.exitCode ?? child?.signalCode ?? 'running')}); stderr:\n${this.stderr}`,
      );
    });
  }

  /** A JSON request with a key (the setup token on /v1/setup); the answer's status and parsed body. */
  async call(
    method: string,
    path: string,
    auth: string | undefined,
    body?: unknown,
  ): Promise<{ status: number; body: Record<string, unknown> }> {
    const res = await this.fetch(path, {
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
