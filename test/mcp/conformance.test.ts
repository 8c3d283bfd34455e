import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { engine, SETUP_TOKEN } from '../helpers/harness.js';
import { childEnv, exited, freePort, ROOT, spawnCli, tempDir } from '../helpers/cli.js';

/**
 * The MCP conformance suite (@modelcontextprotocol/conformance, server mode) against `agent-memory
 * serve`'s /mcp. The suite's client sends no Authorization header, so it talks to a proxy on
 * 127.0.0.1 that adds a key to each request and passes everything else (the Host header included,
 * for the DNS rebinding scenario) through. The scenarios that do not apply are listed, with why, in
 * conformance-baseline.yml: the suite fails on any other failure, and on a listed one that passes.
 */

const START_TIMEOUT_MS = 90_000;
const SUITE = path.join(ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
const BASELINE = path.join(ROOT, 'test/mcp/conformance-baseline.yml');

let child: ChildProcess;
let proxy: Server;
let stderr = '';
const data = tempDir('agent-memory-conformance-');
const results = tempDir('agent-memory-conformance-results-');

async function waitReady(base: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`serve exited (${child.exitCode}); stderr:\n${stderr}`);
    try {
      if ((await fetch(`${base}/readyz`)).ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`serve did not become ready; stderr:\n${stderr}`);
}

/** A proxy to `target` that sends every request with `Authorization: Bearer <key>`. */
function keyProxy(target: URL, key: string): Promise<{ server: Server; url: string }> {
  const server = createServer((req, res) => {
    const upstream = request(
      {
        host: target.hostname,
        port: target.port,
        path: req.url,
        method: req.method,
        headers: { ...req.headers, authorization: `Bearer ${key}` },
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    // A client closing an SSE stream closes the stream upstream too.
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      resolve({ server, url: `http://127.0.0.1:${port}/mcp` });
    }),
  );
}

interface Check {
  id: string;
  status: 'SUCCESS' | 'FAILURE' | 'WARNING' | 'INFO' | 'SKIPPED';
  errorMessage?: string;
}

/** scenario → its checks, from the checks.json files the suite writes. */
function readResults(dir: string): Map<string, Check[]> {
  const byScenario = new Map<string, Check[]>();
  for (const folder of readdirSync(dir)) {
    const scenario = /^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/.exec(folder)?.[1];
    if (scenario === undefined) continue;
    byScenario.set(scenario, JSON.parse(readFileSync(path.join(dir, folder, 'checks.json'), 'utf8')) as Check[]);
  }
  return byScenario;
}

let suiteUrl: string;

beforeAll(async () => {
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const database: Record<string, string> = process.env.TEST_DATABASE_URL
    ? { DATABASE_URL: process.env.TEST_DATABASE_URL }
    : { DATA_DIR: data.dir };
  child = spawnCli(
    ['serve'],
    childEnv({ ...database, PORT: String(port), HOST: '127.0.0.1', SETUP_TOKEN, RATE_LIMIT_PER_MINUTE: '0' }),
  );
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdout?.resume();
  await waitReady(base);
  const setup = await fetch(`${base}/v1/setup`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Setup-Token': SETUP_TOKEN },
    body: JSON.stringify({ org_name: `conformance-${crypto.randomUUID()}` }),
  });
  const { api_key: key } = (await setup.json()) as { api_key: string };
  const proxied = await keyProxy(new URL(base), key);
  proxy = proxied.server;
  suiteUrl = proxied.url;
}, START_TIMEOUT_MS + 10_000);

afterAll(async () => {
  proxy?.closeAllConnections();
  proxy?.close();
  if (child && child.exitCode === null) {
    const exit = exited(child);
    child.kill('SIGTERM');
    await exit;
  }
  data.remove();
  results.remove();
}, 30_000);

describe(`the MCP conformance suite against /mcp (${engine})`, () => {
  it('passes every scenario that applies', async () => {
    const suite = spawn(
      process.execPath,
      [SUITE, 'server', '--url', suiteUrl, '--expected-failures', BASELINE, '-o', results.dir],
      { cwd: results.dir, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    suite.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    suite.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await exited(suite);

    const checks = readResults(results.dir);
    const baseline = readFileSync(BASELINE, 'utf8')
      .split('\n')
      .map((line) => /^\s+- (\S+)/.exec(line)?.[1])
      .filter((name) => name !== undefined);
    const applicable = [...checks.keys()].filter((s) => !baseline.includes(s));
    // What the suite ran besides the scenarios that do not apply; a new scenario in a later version
    // of the suite shows up here and must pass, or be listed in the baseline with its reason.
    expect(applicable.sort()).toEqual(
      [
        'dns-rebinding-protection',
        'ping',
        'prompts-list',
        'resources-list',
        'server-initialize',
        'server-sse-multiple-streams',
        'tools-call-error',
        'tools-call-simple-text',
        'tools-list',
      ].sort(),
    );
    const failed = applicable.flatMap((scenario) =>
      (checks.get(scenario) ?? [])
        .filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')
        .map((c) => `${scenario}: ${c.id} ${c.status} ${c.errorMessage ?? ''}`),
    );
    expect(failed).toEqual([]);
    // The suite's own verdict: no unexpected failure, and no stale entry in the baseline.
    expect(code, output.slice(-4000)).toBe(0);
  }, 240_000);
});
