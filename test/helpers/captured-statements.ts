import type { CompiledQuery, KyselyPlugin } from 'kysely';
import type { Db } from '../../src/db/connect.js';

/**
 * A plugin that keeps every statement run through the handle it is added to, as compiled, in the
 * order run: what a test replays under EXPLAIN. Queries embedded in a statement are compiled under
 * its id too, so the statement is the longest of them.
 */
export function capturingStatements(db: Db): { plugin: KyselyPlugin; captured: CompiledQuery[] } {
  const compiled = new Map<unknown, CompiledQuery[]>();
  const captured: CompiledQuery[] = [];
  const executor = db.getExecutor();
  const plugin: KyselyPlugin = {
    transformQuery: (args) => {
      compiled.set(args.queryId, [
        ...(compiled.get(args.queryId) ?? []),
        executor.compileQuery(args.node, args.queryId),
      ]);
      return args.node;
    },
    transformResult: (args) => {
      const all = compiled.get(args.queryId) ?? [];
      const statement = all.reduce<CompiledQuery | undefined>(
        (a, b) => (a && a.sql.length >= b.sql.length ? a : b),
        undefined,
      );
      if (statement) captured.push(statement);
      return Promise.resolve(args.result);
    },
  };
  return { plugin, captured };
}
