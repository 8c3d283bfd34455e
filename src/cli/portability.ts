import { createReadStream, createWriteStream, statSync } from 'node:fs';
import type { Writable } from 'node:stream';
import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { type Actor, type Core } from '../domain/core.js';
import { ensureLocalTenant } from '../domain/tenancy/local-tenant.js';
import { findTenant } from '../domain/tenancy/tenants.js';
import { AppError } from '../errors.js';
import { exportTenant } from '../portability/export.js';
import { IMPORT_FORMATS, type ImportFormat } from '../portability/formats.js';
import { importStream } from '../portability/run-import.js';
import { startCore } from '../start-core.js';
import { UsageError } from './failure.js';
import { progressBar } from './progress.js';
import { SCOPES } from '../vocabulary.js';

/**
 * `agent-memory export` and `agent-memory import FILE`: the tenant's data out of and into the
 * database this process is configured for (the embedded folder, or DATABASE_URL), without a
 * server. Records go to stdout or the file; the progress bar and messages to stderr.
 */

/** parseArgs, with its refusals (an unknown option, a missing value) as usage errors. */
function parse<R>(run: () => R): R {
  try {
    return run();
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

/** The tenant named by --tenant, else the local tenant (the one `agent-memory mcp` uses). */
async function actorFor(core: Core, tenant: string | undefined): Promise<Actor> {
  if (tenant === undefined) return { tenantId: await ensureLocalTenant(core), keyId: null, scopes: new Set(SCOPES) };
  const found = await findTenant(core, { id: tenant });
  if (!found) throw new AppError('not_found', `no tenant ${tenant} in this database`);
  return { tenantId: found.tenantId, keyId: null, scopes: new Set(SCOPES) };
}

/** Waits for the stream to take more when it is full, so memory stays flat on a slow disk or pipe. */
function lineSink(out: Writable): { write(line: string): Promise<void>; end(): Promise<void> } {
  let buffered: string[] = [];
  let size = 0;
  const flush = async () => {
    if (buffered.length === 0) return;
    const chunk = buffered.join('');
    buffered = [];
    size = 0;
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once('drain', resolve));
  };
  return {
    async write(line) {
      buffered.push(line);
      size += line.length;
      if (size >= 64 * 1024) await flush();
    },
    async end() {
      await flush();
      if (out === process.stdout) return;
      await new Promise<void>((resolve, reject) =>
        out.end((error?: Error | null) => (error ? reject(error) : resolve())),
      );
    },
  };
}

export async function exportCommand(config: Config, args: string[]): Promise<void> {
  const { values } = parse(() =>
    parseArgs({ args, options: { out: { type: 'string' }, audit: { type: 'boolean' }, tenant: { type: 'string' } } }),
  );
  const running = await startCore(config);
  try {
    const actor = await actorFor(running.core, values.tenant);
    const out = values.out ? createWriteStream(values.out) : process.stdout;
    const sink = lineSink(out);
    const bar = progressBar('export');
    const counts = await exportTenant(
      running.core,
      actor.tenantId,
      { audit: values.audit === true, onProgress: (done, total) => bar.update(done, total) },
      (line) => sink.write(line),
    );
    await sink.end();
    bar.end();
    process.stderr.write(
      `exported ${counts.anchors} anchors, ${counts.sessions} sessions, ${counts.memories} memories, ` +
        `${counts.canon} canon entries${values.audit ? `, ${counts.audit} audit events` : ''}\n`,
    );
  } finally {
    await running.close();
  }
}

export async function importCommand(config: Config, args: string[]): Promise<void> {
  const { values, positionals } = parse(() =>
    parseArgs({
      args,
      allowPositionals: true,
      options: { format: { type: 'string' }, 'agent-id': { type: 'string' }, tenant: { type: 'string' } },
    }),
  );
  const [file, ...extra] = positionals;
  if (file === undefined || extra.length > 0) throw new UsageError('import needs one FILE');
  const format = (values.format ?? 'agent-memory') as ImportFormat;
  if (!IMPORT_FORMATS.includes(format)) throw new UsageError(`--format is one of ${IMPORT_FORMATS.join(', ')}`);
  // Before the database opens, so that a wrong path costs nothing.
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    throw new UsageError(`cannot read ${file}`);
  }
  const running = await startCore(config);
  try {
    const actor = await actorFor(running.core, values.tenant);
    const bar = progressBar('import');
    const result = await importStream(running.core, actor, createReadStream(file), {
      format,
      agentId: values['agent-id'] ?? 'import',
      onProgress: (bytes) => bar.update(bytes, size),
    }).finally(() => bar.end());
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await running.close();
  }
}
