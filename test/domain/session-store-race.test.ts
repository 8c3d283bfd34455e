import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import type { Actor } from '../../src/domain/core.js';
import { storeMemory } from '../../src/domain/store/store.js';
import { createSession } from '../../src/domain/subjects/sessions.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { AppError } from '../../src/errors.js';
import { engine, testCore } from '../helpers/harness.js';

// PGlite has one connection, so transactions cannot interleave there; the race exists only on a server.
describe.skipIf(engine !== 'postgres')('a store racing the end of its session', () => {
  it('waits for the end to commit, then is refused with session_ended', async () => {
    const core = await testCore();
    const tenant = await createTenant(core, `race-${Date.now()}-${Math.random()}`);
    const actor: Actor = {
      tenantId: tenant.tenantId,
      keyId: tenant.keyId,
      scopes: new Set(['read', 'write', 'admin']),
    };
    const session = await createSession(core, actor, { agentId: 'a', anchor: {} });

    let storeSettled = false;
    let store: Promise<unknown> | undefined;
    await core.db.transaction().execute(async (trx) => {
      // What endSession does, held open while a store arrives on another connection.
      await sql`SELECT 1 FROM sessions WHERE tenant_id = ${tenant.tenantId} AND id = ${session.id} FOR UPDATE`.execute(
        trx,
      );
      await trx
        .updateTable('sessions')
        .set({ status: 'ended', ended_at: new Date() })
        .where('id', '=', session.id)
        .execute();
      store = storeMemory(core, actor, {
        agentId: 'a',
        content: 'late fact',
        anchor: {},
        sessionId: session.id,
      }).finally(() => {
        storeSettled = true;
      });
      store.catch(() => undefined);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(storeSettled).toBe(false);
    });
    const error = await store?.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(AppError);
    expect((error as AppError).code).toBe('session_ended');
    const rows = await core.db.selectFrom('memories').select('id').where('session_id', '=', session.id).execute();
    expect(rows).toEqual([]);
  });
});
