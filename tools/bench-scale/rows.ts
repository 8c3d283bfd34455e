import { randomUUID } from 'node:crypto';
import { identityText } from '../../src/beliefs/near-duplicate.js';
import { memoriesOf, SUBJECT_BIG, type Plan } from './plan.js';
import { prng, sentence } from './text.js';
import type { Binding } from '../../src/vocabulary.js';

/** One memory as the loader writes it; everything else in its row follows from config and embedder. */
export interface MemorySeed {
  tenantId: string;
  id: string;
  agentId: string;
  content: string;
  binding: Binding;
  anchorId: string | null;
  sessionId: string | null;
  createdAt: Date;
  /** Its metadata as JSON: '{}' but in the big subject, whose memories the filtered recalls pick by it. */
  metadata: string;
}

/** The big subject's metadata topics: a filter on one of them lets a tenth of it through. */
export const BIG_SUBJECT_TOPICS = 10;
/** One memory in this many of the big subject is marked rare: 5 of 10,000. */
export const BIG_SUBJECT_RARE_EVERY = 2000;

function bigSubjectMetadata(k: number): string {
  return JSON.stringify({
    topic: `t${k % BIG_SUBJECT_TOPICS}`,
    ...(k % BIG_SUBJECT_RARE_EVERY === 7 ? { rare: true } : {}),
  });
}

const MEMORY_GAP_MS = 90_000;

export const plannedMemories = (plan: Plan): number =>
  plan.subjects.reduce((n, s) => n + memoriesOf(s), 0) +
  plan.privates.reduce((n, p) => n + p.count, 0) +
  plan.tenantIds.length * plan.canonPerTenant;

/**
 * Every memory of the plan, in store order: a session's memories are consecutive, so their seq
 * orders them as the store path would. No partition holds the same text twice, since the store
 * path would have reinforced the first instead of writing a second.
 */
export function* memorySeeds(plan: Plan): Generator<MemorySeed> {
  const random = prng(7_919);
  const unique = (seen: Set<string>): string => {
    for (;;) {
      const text = sentence(random);
      const key = identityText(text);
      if (!seen.has(key)) {
        seen.add(key);
        return text;
      }
    }
  };
  for (let tenant = 0; tenant < plan.tenantIds.length; tenant++) {
    const tenantId = plan.tenantIds[tenant] as string;
    const seen = new Set<string>();
    for (let i = 0; i < plan.canonPerTenant; i++) {
      const content = unique(seen);
      yield {
        tenantId,
        id: randomUUID(),
        agentId: 'agent-admin',
        content,
        binding: 'canon',
        anchorId: null,
        sessionId: null,
        createdAt: new Date(Date.now() - 400 * 86_400_000),
        metadata: '{}',
      };
    }
  }
  for (const subject of plan.subjects) {
    const tenantId = plan.tenantIds[subject.tenant] as string;
    const seen = new Set<string>();
    let k = 0;
    const metadata = () => (subject.externalId === SUBJECT_BIG ? bigSubjectMetadata(k++) : '{}');
    for (const session of subject.sessions) {
      let at = session.startedAt.getTime();
      const base = { tenantId, agentId: session.agentId, anchorId: subject.id, sessionId: session.id };
      for (let i = 0; i < session.anchored + session.sessionBound; i++) {
        const binding: Binding = i < session.anchored ? 'anchored' : 'session';
        yield {
          ...base,
          id: randomUUID(),
          content: unique(seen),
          binding,
          createdAt: new Date((at += MEMORY_GAP_MS)),
          metadata: metadata(),
        };
      }
    }
  }
  for (const p of plan.privates) {
    const tenantId = plan.tenantIds[p.tenant] as string;
    const seen = new Set<string>();
    const gap = Math.max(1, Math.floor((Date.now() - p.startedAt.getTime()) / Math.max(1, p.count + 1)));
    let at = p.startedAt.getTime();
    for (let i = 0; i < p.count; i++) {
      yield {
        tenantId,
        id: randomUUID(),
        agentId: p.agentId,
        content: unique(seen),
        binding: 'private',
        anchorId: null,
        sessionId: null,
        createdAt: new Date((at += gap)),
        metadata: '{}',
      };
    }
  }
}
