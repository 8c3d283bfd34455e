import { describe, expect, it } from 'vitest';
import { engine, newTenant, testApi } from '../helpers/harness.js';
import { ids, recall, startSession, storeMemory } from '../helpers/store-recall.js';

/**
 * A session memory keeps the session it was formed in when a later session of its subject stores it
 * again (docs/api.md §6); a recall in the later session must still find it.
 */
describe(`recall in a session that stored a fact again on ${engine}`, () => {
  it('finds the memory formed in an earlier session of the subject', async () => {
    const api = await testApi();
    const t = await newTenant(api);
    const first = await startSession(api, t.auth, { agent_id: 'bot', anchor_external_id: 'mira' });
    const formed = await storeMemory(api, t.auth, {
      agent_id: 'bot',
      session_id: first,
      content: 'Mira is travelling to Oslo on Friday',
    });
    const second = await startSession(api, t.auth, { agent_id: 'bot', anchor_external_id: 'mira' });
    const again = await api.http
      .post('/v1/memories')
      .set(t.auth)
      .send({ agent_id: 'bot', session_id: second, content: 'Mira is travelling to Oslo on Friday' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: formed, outcome: 'reinforced', session_id: first });

    const inSecond = await recall(api, t.auth, { agent_id: 'bot', session_id: second, query: 'Oslo trip' });
    expect(ids(inSecond)).toContain(formed);
    // A third session of the subject that never stored it does not see it.
    const third = await startSession(api, t.auth, { agent_id: 'bot', anchor_external_id: 'mira' });
    const inThird = await recall(api, t.auth, { agent_id: 'bot', session_id: third, query: 'Oslo trip' });
    expect(ids(inThird)).not.toContain(formed);
  });
});
