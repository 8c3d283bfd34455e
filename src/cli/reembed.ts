import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import type { Embedder } from '../embedding/embedder.js';
import { EmbeddingError } from '../embedding/http.js';
import { createEmbedder } from '../embedding/factory.js';
import { DEFAULT_BATCH_SIZE, reembedDatabase } from '../reembed.js';
import { progressBar } from './progress.js';

/** `agent-memory reembed [--batch-size N]`: the command's arguments and its report; the work is src/reembed.ts. */
export async function reembed(config: Config, args: string[]): Promise<void> {
  let batchSize = DEFAULT_BATCH_SIZE;
  try {
    const { values } = parseArgs({ args, options: { 'batch-size': { type: 'string' } } });
    if (values['batch-size'] !== undefined) batchSize = Number(values['batch-size']);
    if (!Number.isInteger(batchSize) || batchSize < 1) throw new Error('--batch-size must be a positive integer');
  } catch (error) {
    process.stderr.write(`agent-memory reembed: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 2;
    return;
  }
  let embedder: Embedder;
  try {
    embedder = await createEmbedder(config);
  } catch (error) {
    if (!(error instanceof EmbeddingError)) throw error;
    process.stderr.write(`agent-memory reembed: ${error.message}\n`);
    process.exitCode = 1;
    return;
  }
  try {
    const bar = progressBar('reembed');
    const { reembedded, windows, concepts } = await reembedDatabase(config, embedder, {
      batchSize,
      onProgress: ({ done, total }) => bar.update(done, total),
    });
    bar.end();
    process.stderr.write(
      `re-embedded ${reembedded} memories with ${embedder.id}, embedded ${windows} window vectors, ` +
        `computed the concepts of ${concepts} memories\n`,
    );
  } catch (error) {
    if (!(error instanceof EmbeddingError)) throw error;
    process.stderr.write(`\nagent-memory reembed: ${error.message}; run it again to carry on\n`);
    process.exitCode = 1;
  } finally {
    await embedder.close();
  }
}
