import type { ChildProcess } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, childEnv, exited, ROOT, spawnCli, tempDir } from '../helpers/cli.js';
import { ok, readJson, text, call, type Json } from '../helpers/mcp.js';

/**
 * `agent-memory mcp` as a client starts it: a child process on the current source, speaking
 * JSON-RPC on stdin/stdout, with logs on (LOG_LEVEL=info) so that any log line on stdout shows.
 */

// Starting a process with a fresh embedded database takes seconds on a loaded 2-core machine.
const START_TIMEOUT_MS = 90_000;
/**
 * How long a process may take to exit once stdin has closed. A ceiling that only a process that
 * stays up would reach, never a latency target: exit times on a busy machine range from tens of
 * milliseconds to seconds.
 */
const EXIT_CEILING_MS = 30_000;

async function connectStdio(env: Record<string, string>): Promise<{ client: Client; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: CLI[0],
    args: [...CLI.slice(1), 'mcp'],
    cwd: ROOT,
    env,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'stdio-test', version: '1.0.0' });
  await client.connect(transport, { timeout: START_TIMEOUT_MS });
  return { client, stderr: () => stderr };
}

describe('agent-memory mcp over stdio (SDK client)', () => {
  const data = tempDir('agent-memory-stdio-');
  let client: Client;
  let stderr: () => string;

  beforeAll(async () => {
    ({ client, stderr } = await connectStdio(childEnv({ DATA_DIR: data.dir, AGENT_ID: 'stdio-agent' })));
  }, START_TIMEOUT_MS + 10_000);

  afterAll(async () => {
    await client?.close();
    data.remove();
  });

  it('serves every tool as the local tenant with every scope, and logs to stderr', async () => {
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(
      ['correct', 'end_session', 'purge_subject', 'recall', 'remember', 'start_session', 'write_canon'].sort(),
    );
    const canon = await ok(client, 'write_canon', { content: 'Answer in the language of the question' });
    const session = await ok(client, 'start_session', { subject: 'project-x' });
    const durable = await ok(client, 'remember', { content: 'The language is Portuguese', subject: 'project-x' });
    const note = await ok(client, 'remember', {
      content: 'Question language today: Portuguese',
      session_id: session.id,
    });
    const own = await ok(client, 'remember', { content: 'My language notes live in the wiki' });
    expect(own.agent_id).toBe('stdio-agent');
    const other = await ok(client, 'remember', { content: 'The language is Finnish', subject: 'project-y' });

    const { results } = await ok(client, 'recall', {
      query: 'which language',
      subject: 'project-x',
      session_id: session.id,
      limit: 20,
    });
    const ids = results.map((r: { id: string }) => r.id);
    expect(ids).toEqual(expect.arrayContaining([canon.id, durable.id, note.id, own.id]));
    expect(ids).not.toContain(other.id);

    const ended = await ok(client, 'end_session', { session_id: session.id });
    expect(ended.status).toBe('ended');
    const purged = await ok(client, 'purge_subject', { subject: 'project-y', confirm: true });
    expect(purged.deleted).toEqual({ memories: 1, sessions: 0 });
    const gone = await call(client, 'purge_subject', { subject: 'project-y', confirm: true });
    expect(text(gone)).toMatch(/^No such subject "project-y"/);

    expect(stderr()).toContain('"msg":"agent-memory mcp serving on stdio"');
  });

  it('lists the prompts, and sends a subscribed resource its update after a store, none for another subject', async () => {
    expect((await client.listPrompts()).prompts.map((p) => p.name).sort()).toEqual([
      'remember_conversation',
      'subject_context',
    ]);
    const heard: string[] = [];
    let canonHeard: () => void = () => undefined;
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      heard.push(n.params.uri);
      if (n.params.uri === 'memory://canon') canonHeard();
    });
    await client.subscribeResource({ uri: 'memory://subjects/watched' });
    await client.subscribeResource({ uri: 'memory://canon' });
    await ok(client, 'remember', { content: 'Likes sailing', subject: 'unwatched' });
    await ok(client, 'remember', { content: 'Likes climbing', subject: 'watched' });
    // Changes are heard in commit order: once canon's update is here, the subjects' are too.
    const barrier = new Promise<void>((resolve) => (canonHeard = resolve));
    await ok(client, 'write_canon', { content: 'Keep answers short' });
    await barrier;
    expect(heard).toEqual(['memory://subjects/watched', 'memory://canon']);
    await client.unsubscribeResource({ uri: 'memory://subjects/watched' });
    await client.unsubscribeResource({ uri: 'memory://canon' });
  });

  it('lists and reads the resources', async () => {
    await ok(client, 'remember', { content: 'Deploys on Tuesdays', subject: 'service-a' });
    const session = await ok(client, 'start_session', {});
    await ok(client, 'remember', { content: 'Debugging the login page', session_id: session.id });
    const uris = (await client.listResources()).resources.map((r) => r.uri);
    expect(uris).toEqual(
      expect.arrayContaining(['memory://canon', 'memory://subjects/service-a', `memory://sessions/${session.id}`]),
    );
    const profile = await readJson(client, 'memory://subjects/service-a');
    expect(profile.memories.map((m: { content: string }) => m.content)).toEqual(['Deploys on Tuesdays']);
    const read = await readJson(client, `memory://sessions/${session.id}`);
    expect(read.memories.map((m: { content: string }) => m.content)).toEqual(['Debugging the login page']);
    expect(Array.isArray((await readJson(client, 'memory://canon')).canon)).toBe(true);
  });

  it(
    'refuses to open the same data folder from a second process, which would corrupt it',
    async () => {
      const second = spawnCli(['mcp'], childEnv({ DATA_DIR: data.dir }));
      let err = '';
      let out = '';
      second.stderr?.on('data', (chunk: Buffer) => (err += chunk.toString()));
      second.stdout?.on('data', (chunk: Buffer) => (out += chunk.toString()));
      expect(await exited(second)).toBe(1);
      expect(err).toMatch(/the embedded database in .* is in use by process \d+/);
      expect(out).toBe('');
      // The first process is unharmed.
      const { results } = await ok(client, 'recall', { query: 'Tuesdays', subject: 'service-a' });
      expect(results.map((r: { content: string }) => r.content)).toContain('Deploys on Tuesdays');
    },
    START_TIMEOUT_MS,
  );
});

interface Line {
  raw: string;
  parsed: Json;
}

describe('agent-memory mcp over stdio (raw pipes)', () => {
  it(
    'writes nothing but JSON-RPC to stdout, keeps its data across starts, and exits when stdin closes',
    async () => {
      const data = tempDir('agent-memory-stdio-raw-');
      try {
        const env = childEnv({ DATA_DIR: data.dir, LOG_LEVEL: 'debug' });
        const first = await session(env, [
          { method: 'tools/list' },
          { method: 'resources/list' },
          { method: 'resources/templates/list' },
          { method: 'tools/call', params: { name: 'remember', arguments: { content: 'Kept across restarts' } } },
          { method: 'tools/call', params: { name: 'start_session', arguments: {} } },
          { method: 'tools/call', params: { name: 'recall', arguments: { query: 'kept' } } },
          // A tool that does not exist (the session also sends a line that is not JSON at all).
          { method: 'tools/call', params: { name: 'no_such_tool', arguments: {} } },
        ]);
        // A second process on the same folder finds the same local tenant and its memories.
        const second = await session(env, [
          { method: 'tools/call', params: { name: 'recall', arguments: { query: 'kept across restarts' } } },
        ]);
        const recalled = second.lines.find((l) => l.parsed.id === 2)?.parsed.result.structuredContent.results;
        expect(recalled.map((r: { content: string }) => r.content)).toContain('Kept across restarts');

        for (const run of [first, second]) {
          expect(run.lines.length).toBeGreaterThan(0);
          for (const line of run.lines) {
            expect(line.parsed.jsonrpc, line.raw).toBe('2.0');
            expect('result' in line.parsed || 'error' in line.parsed || 'method' in line.parsed, line.raw).toBe(true);
          }
          // Logs were written, to stderr: the process did log at info and debug.
          expect(run.stderr).toContain('"msg":"agent-memory mcp serving on stdio"');
          // Still running when stdin closed, then a clean exit: it ended because its input did.
          expect(run.runningAtClose).toBe(true);
          expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
        }
        const ids = first.lines.map((l) => l.parsed.id).sort();
        expect(ids).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
      } finally {
        data.remove();
      }
    },
    3 * START_TIMEOUT_MS,
  );

  it(
    'answers what a pipe wrote before closing stdin, as `printf … | agent-memory mcp` does, then exits',
    async () => {
      const data = tempDir('agent-memory-stdio-pipe-');
      try {
        const run = await session(
          childEnv({ DATA_DIR: data.dir }),
          [
            { method: 'tools/list' },
            { method: 'tools/call', params: { name: 'remember', arguments: { content: 'Piped in' } } },
          ],
          { closeAtOnce: true },
        );
        expect({ code: run.code, signal: run.signal }).toEqual({ code: 0, signal: null });
        expect(run.lines.map((l) => l.parsed.id).sort()).toEqual([1, 2, 3]);
        const stored = run.lines.find((l) => l.parsed.id === 3)?.parsed.result;
        expect(stored.structuredContent).toMatchObject({ content: 'Piped in', agent_id: 'raw-test' });
      } finally {
        data.remove();
      }
    },
    2 * START_TIMEOUT_MS,
  );
});

/**
 * Starts `agent-memory mcp`, initializes, sends the requests (ids 2, 3, …), waits for every
 * answer, closes stdin and waits for the process to exit, at most EXIT_CEILING_MS.
 */
async function session(
  env: Record<string, string>,
  requests: { method: string; params?: unknown }[],
  options: { closeAtOnce?: boolean } = {},
): Promise<{ lines: Line[]; stderr: string; runningAtClose: boolean; code: number | null; signal: string | null }> {
  const child = spawnCli(['mcp'], env);
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const expected = requests.length + 1;
  const answered = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no answers after ${START_TIMEOUT_MS} ms; stderr:\n${stderr}`)),
      START_TIMEOUT_MS,
    );
    child.stdout?.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
      const responses = stdout.split('\n').filter((l) => l.includes('"id"')).length;
      if (responses >= expected) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`exited early (${code}); stderr:\n${stderr}`)));
  });
  const send = (message: unknown) => child.stdin?.write(`${JSON.stringify(message)}\n`);
  send({
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw-test', version: '0' } },
  });
  send({ jsonrpc: '2.0', method: 'notifications/initialized' });
  // Garbage is logged to stderr and answered with nothing.
  child.stdin?.write('this is not JSON-RPC\n');
  requests.forEach((r, i) => send({ jsonrpc: '2.0', id: i + 2, ...r }));
  if (options.closeAtOnce) child.stdin?.end();
  await answered;
  const exit = exitOf(child);
  const runningAtClose = child.exitCode === null && child.signalCode === null;
  child.stdin?.end();
  const { code, signal } = await within(exit, EXIT_CEILING_MS, () => {
    child.kill('SIGKILL');
    return `still running ${EXIT_CEILING_MS} ms after stdin closed; stderr:\n${stderr}`;
  });
  const lines = stdout
    .split('\n')
    .filter((l) => l.length > 0)
    .map((raw) => {
      try {
        return { raw, parsed: JSON.parse(raw) as unknown };
      } catch {
        throw new Error(`stdout carried a line that is not JSON: ${raw}`);
      }
    });
  return { lines, stderr, runningAtClose, code, signal };
}

/** The exit code and signal, once the child has exited. */
function exitOf(child: ChildProcess): Promise<{ code: number | null; signal: string | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

async function within<T>(promise: Promise<T>, ms: number, onTimeout: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(onTimeout())), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
