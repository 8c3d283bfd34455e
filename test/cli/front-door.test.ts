import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { isolatedDatabase } from '../helpers/isolated-db.js';
import { childEnv, exited, freePort, spawnCli, tempDir } from '../helpers/cli.js';
import { type Json } from '../helpers/mcp.js';

/**
 * What a newcomer meets first, through the real CLI: `agent-memory mcp` answering `initialize`
 * before its database and model are ready, startup failures told in one line, and `keys create`.
 */

/**
 * Generous, and run on the TypeScript source through tsx, which compiles every module first: the
 * MCP Inspector's connect timeout (Claude Code allows 30 s). The point is not waiting for startup.
 */
const INITIALIZE_CEILING_MS = 15_000;
const START_TIMEOUT_MS = 120_000;

interface Conversation {
  child: ChildProcess;
  stderr: () => string;
  /** Sends a request; resolves with its answer and when it came, in ms since the process started. */
  request(method: string, params?: unknown): Promise<{ answer: Json; ms: number }>;
  /** When stderr first carried `text`, in ms since the process started. */
  logged(text: string): Promise<number>;
  /** Closes stdin and resolves with the exit code. */
  close(): Promise<number | null>;
}

function converse(env: Record<string, string>): Conversation {
  const started = performance.now();
  const child = spawnCli(['mcp'], env);
  let stdout = '';
  let stderr = '';
  let nextId = 1;
  const waiting = new Map<number, (answer: Json) => void>();
  const watchers: { text: string; done: (ms: number) => void }[] = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    let newline;
    while ((newline = stdout.indexOf('\n')) >= 0) {
      const line = stdout.slice(0, newline);
      stdout = stdout.slice(newline + 1);
      const message: Json = JSON.parse(line);
      waiting.get(message.id)?.(message);
    }
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    for (const w of watchers.filter((w) => stderr.includes(w.text))) {
      watchers.splice(watchers.indexOf(w), 1);
      w.done(performance.now() - started);
    }
  });
  return {
    child,
    stderr: () => stderr,
    request(method, params) {
      const id = nextId++;
      child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      return new Promise((resolve) =>
        waiting.set(id, (answer) => resolve({ answer, ms: performance.now() - started })),
      );
    },
    logged(text) {
      if (stderr.includes(text)) return Promise.resolve(performance.now() - started);
      return new Promise((done) => watchers.push({ text, done }));
    },
    close() {
      child.stdin?.end();
      return exited(child);
    },
  };
}

const initialize = (c: Conversation) =>
  c.request('initialize', {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'front-door-test', version: '0' },
  });

describe('agent-memory mcp answers initialize before its database and model are ready', () => {
  const data = tempDir('agent-memory-front-door-');
  afterAll(() => data.remove());

  // The default embedder, the local model: what a newcomer runs, and the slowest start there is.
  const env = childEnv({ DATA_DIR: data.dir, EMBEDDER: 'local' });

  for (const folder of ['a fresh data folder', 'the same folder again']) {
    it(
      `on ${folder}`,
      async () => {
        const c = converse(env);
        try {
          const init = await initialize(c);
          expect(init.answer.result.serverInfo.name).toBe('agent-memory');
          c.child.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
          const tools = await c.request('tools/list');
          // Sent before startup finished: it waits for it, then is answered as usual.
          const remembered = c.request('tools/call', {
            name: 'remember',
            arguments: { content: `Started ${folder}`, subject: 'front-door' },
          });
          const ready = await c.logged('"msg":"agent-memory mcp ready"');
          const stored = await remembered;
          // Reported by vitest with the test: the figures the issue asks for.
          console.info(
            `${folder}: initialize ${Math.round(init.ms)} ms, tools/list ${Math.round(tools.ms)} ms, ` +
              `ready ${Math.round(ready)} ms, first remember ${Math.round(stored.ms)} ms`,
          );
          expect(init.ms).toBeLessThan(INITIALIZE_CEILING_MS);
          expect(init.ms).toBeLessThan(ready);
          expect(tools.answer.result.tools.length).toBeGreaterThan(0);
          expect(stored.answer.result.isError, JSON.stringify(stored.answer)).toBeUndefined();
          expect(stored.answer.result.structuredContent.content).toBe(`Started ${folder}`);
          expect(await c.close()).toBe(0);
        } finally {
          c.child.kill();
        }
      },
      START_TIMEOUT_MS,
    );
  }
});

describe('agent-memory on a folder of its own, with the quick embedder', () => {
  const data = tempDir('agent-memory-front-door-hash-');
  afterAll(() => data.remove());
  const env = childEnv({ DATA_DIR: data.dir });

  it(
    'says in one line that another process holds the folder, naming the folder and the holder',
    async () => {
      const first = converse(env);
      try {
        await initialize(first);
        const second = spawnCli(['mcp'], env);
        let err = '';
        let out = '';
        second.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
        second.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
        expect(await exited(second)).toBe(1);
        expect(out).toBe('');
        const lines = err.trimEnd().split('\n');
        expect(lines, err).toHaveLength(1);
        expect(lines[0]).toContain(`the embedded database in ${data.dir} is in use by process ${first.child.pid}`);
        expect(await first.close()).toBe(0);
      } finally {
        first.child.kill();
      }
    },
    START_TIMEOUT_MS,
  );

  it(
    'keys create prints a key for the local tenant once, and the tenant it belongs to',
    async () => {
      const child = spawnCli(['keys', 'create', '--scopes', 'read'], env);
      let out = '';
      let err = '';
      child.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
      child.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
      expect(await exited(child), err).toBe(0);
      expect(out).toMatch(
        /^tenant_id: [0-9a-f-]{36}\norg_name: {2}local\nkey_id: {4}[0-9a-f-]{36}\nscopes: {4}read\napi_key: {3}rk_\w{40}\n$/,
      );
      expect(err).toContain('shown only once');
    },
    START_TIMEOUT_MS,
  );
});

describe('agent-memory mcp when startup fails', () => {
  it(
    'still answers initialize, then answers tool calls and reads with the one line that says why',
    async () => {
      const port = await freePort();
      const c = converse(childEnv({ DATABASE_URL: `postgres://me:pw-not-shown@127.0.0.1:${port}/memories` }));
      try {
        const init = await initialize(c);
        expect(init.answer.result.serverInfo.name).toBe('agent-memory');
        const why = `nothing accepts connections at 127.0.0.1:${port} (DATABASE_URL); is PostgreSQL running there?`;
        const call = await c.request('tools/call', { name: 'recall', arguments: { query: 'anything' } });
        expect(call.answer.result).toEqual({
          isError: true,
          content: [{ type: 'text', text: `agent-memory could not start, so memory is unavailable: ${why}` }],
        });
        const read = await c.request('resources/read', { uri: 'memory://canon' });
        expect(read.answer.error.message).toContain(why);
        // One line on stderr that a client shows, among the JSON logs: no stack trace, no password.
        const plain = c
          .stderr()
          .split('\n')
          .filter((l) => l.length > 0 && !l.startsWith('{'));
        expect(plain).toEqual([`agent-memory: ${why}`]);
        expect(c.stderr()).not.toContain('pw-not-shown');
        expect(await c.close()).toBe(0);
      } finally {
        c.child.kill();
      }
    },
    START_TIMEOUT_MS,
  );

  it.runIf(process.env.TEST_DATABASE_URL)(
    'names a database that does not exist in one line, from migrate and from mcp',
    async () => {
      const url = new URL(process.env.TEST_DATABASE_URL ?? '');
      const missing = `am_missing_${randomUUID().slice(0, 8)}`;
      url.pathname = `/${missing}`;
      const env = childEnv({ DATABASE_URL: url.href });
      const migrate = spawnCli(['migrate'], env);
      let err = '';
      migrate.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
      expect(await exited(migrate)).toBe(1);
      expect(err).toMatch(
        new RegExp(`^agent-memory: the database "${missing}" of DATABASE_URL does not exist on .*\\n$`),
      );

      const c = converse(env);
      try {
        await initialize(c);
        const call = await c.request('tools/call', { name: 'recall', arguments: { query: 'anything' } });
        expect(call.answer.result.content[0].text).toContain(
          `the database "${missing}" of DATABASE_URL does not exist`,
        );
        expect(await c.close()).toBe(0);
      } finally {
        c.child.kill();
      }
    },
    START_TIMEOUT_MS,
  );

  it.runIf(process.env.TEST_DATABASE_URL)(
    'migrate --citus on a Postgres without Citus migrates, then says what to do in one line',
    async () => {
      const iso = await isolatedDatabase();
      try {
        const migrate = spawnCli(['migrate', '--citus'], childEnv({ ...iso.env, LOG_LEVEL: 'silent' }));
        let err = '';
        migrate.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
        expect(await exited(migrate)).toBe(1);
        expect(err).toMatch(/^migrations are up to date\nagent-memory: the database has no citus extension: .*\n$/);
      } finally {
        await iso.drop();
      }
    },
    START_TIMEOUT_MS,
  );

  it('refuses migrate --citus on the embedded database, as a usage error', async () => {
    const migrate = spawnCli(['migrate', '--citus'], childEnv({ DATA_DIR: ':memory:' }));
    let err = '';
    migrate.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
    expect(await exited(migrate)).toBe(2);
    expect(err).toMatch(/^agent-memory: migrate --citus needs DATABASE_URL/);
  });
});
