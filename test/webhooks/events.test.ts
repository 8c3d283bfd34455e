import { describe, expect, it } from 'vitest';
import { AUDIT_ACTIONS, EVENT_OF_ACTION, WEBHOOK_EVENTS } from '../../src/vocabulary.js';

/** The one table from audit actions to webhook events stays whole as actions are added. */
describe('webhook event names', () => {
  /** Audited, and deliberately sent to no endpoint: a key's life is not a change of memory. */
  const NOT_SENT = ['key_created', 'key_revoked'];

  it('maps every audit action to an event, but the keys', () => {
    const unmapped = AUDIT_ACTIONS.filter((a) => EVENT_OF_ACTION[a] === undefined);
    expect(unmapped).toEqual(NOT_SENT);
  });

  it('maps only to documented event names, each once', () => {
    const names = Object.values(EVENT_OF_ACTION);
    expect(names.every((n) => (WEBHOOK_EVENTS as readonly string[]).includes(n))).toBe(true);
    expect(new Set(names).size).toBe(names.length);
    for (const name of WEBHOOK_EVENTS) expect(name).toMatch(/^[a-z]+\.[a-z_]+$/);
  });
});
