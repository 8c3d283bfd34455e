import { randomUUID } from 'node:crypto';
import { prng } from './text.js';

/** The measured tenant's scopes besides the big ones; a test makes them small. */
export interface Layout {
  /** One subject of each of these sizes. */
  midSubjects: number[];
  /** Subjects of typicalSize that recall rotates over, so that no one subject stays hot in the cache. */
  typicalSubjects: number;
  /** Subjects of typicalSize that stores go to, so that the subjects recall is timed on keep their sizes. */
  storeSubjects: number;
  typicalSize: number;
}

export const DEFAULT_LAYOUT: Layout = {
  midSubjects: [1_000, 10_000],
  typicalSubjects: 40,
  storeSubjects: 10,
  typicalSize: 100,
};

/** What the benchmark builds, from its flags. The memories count is the total, special scopes included. */
export interface Sizes {
  memories: number;
  tenants: number;
  subjects: number;
  bigSubject: number;
  bigAgent: number;
  layout: Layout;
}

/** The scopes of the measured tenant (tenant 0) that recall is timed on, by name. */
export const AGENT_READER = 'agent-reader';
export const AGENT_BIG = 'agent-big';
export const SUBJECT_BIG = 'subject-big';
export const midSubject = (size: number): string =>
  size >= 1000 && size % 1000 === 0 ? `subject-${size / 1000}k` : `subject-${size}`;
export const typicalSubject = (i: number): string => `subject-typical-${i}`;
export const storeSubject = (i: number): string => `subject-store-${i}`;
const CANON_PER_TENANT = 10;
const AGENTS_PER_TENANT = 5;
const SESSION_LENGTH = 20;
const DAY_MS = 86_400_000;

export const orgName = (tenant: number): string => `bench-scale-${tenant}`;

export interface SessionPlan {
  id: string;
  agentId: string;
  /** An active session has no end; an ended one expired long ago (its session-bound memories were swept). */
  active: boolean;
  startedAt: Date;
  anchored: number;
  /** Memories stored with only the session named: binding `session`, owned by the session's subject. */
  sessionBound: number;
}

export interface SubjectPlan {
  tenant: number;
  id: string;
  externalId: string;
  sessions: SessionPlan[];
}

export interface PrivatePlan {
  tenant: number;
  agentId: string;
  count: number;
  startedAt: Date;
}

export interface Plan {
  sizes: Sizes;
  tenantIds: string[];
  subjects: SubjectPlan[];
  privates: PrivatePlan[];
  canonPerTenant: number;
}

export const memoriesOf = (s: SubjectPlan): number => s.sessions.reduce((n, x) => n + x.anchored + x.sessionBound, 0);

/** Memories the measured tenant's special scopes take out of the total. */
export function specialMemories(sizes: Sizes): number {
  const l = sizes.layout;
  const mid = l.midSubjects.reduce((a, b) => a + b, 0);
  return sizes.bigAgent + sizes.bigSubject + mid + (l.typicalSubjects + l.storeSubjects) * l.typicalSize;
}

export function checkSizes(sizes: Sizes): void {
  const canon = sizes.tenants * CANON_PER_TENANT;
  const needed = specialMemories(sizes) + canon;
  if (sizes.memories < needed) {
    throw new Error(
      `--memories ${sizes.memories} is too small for the measured scopes (big agent ${sizes.bigAgent}, big subject ` +
        `${sizes.bigSubject}, subjects of ${sizes.layout.midSubjects.join(', ')}, ` +
        `${sizes.layout.typicalSubjects + sizes.layout.storeSubjects} of ${sizes.layout.typicalSize}, canon ${canon}): ` +
        `at least ${needed}`,
    );
  }
  if (sizes.tenants < 1 || sizes.subjects < 1) throw new Error('--tenants and --subjects must be at least 1');
}

/**
 * Sessions of about SESSION_LENGTH memories, oldest first; only a subject's last session is still
 * active, and only that one holds session-bound memories (the sweeper deletes those of expired ones).
 */
function sessionsFor(random: () => number, agentId: string, anchored: number, sessionBound: number, now: number) {
  const sessions: SessionPlan[] = [];
  const count = Math.max(1, Math.ceil((anchored + sessionBound) / SESSION_LENGTH));
  let left = anchored;
  for (let i = 0; i < count; i++) {
    const last = i === count - 1;
    const take = last ? left : Math.min(left, Math.floor(anchored / count));
    left -= take;
    const age = ((count - i) / count) * 365 * DAY_MS * (0.5 + random() / 2);
    sessions.push({
      id: randomUUID(),
      agentId,
      active: last,
      startedAt: new Date(now - age),
      anchored: take,
      sessionBound: last ? sessionBound : 0,
    });
  }
  return sessions;
}

/** The whole dataset's shape; rows are generated from it batch by batch (rows.ts). */
export function makePlan(sizes: Sizes, now: Date): Plan {
  checkSizes(sizes);
  const random = prng(20261123);
  const t = now.getTime();
  const tenantIds = Array.from({ length: sizes.tenants }, () => randomUUID());
  const subjects: SubjectPlan[] = [];
  const privates: PrivatePlan[] = [];
  const subject = (tenant: number, externalId: string, anchored: number, sessionBound = 0): void => {
    const agentId = `agent-${Math.floor(random() * AGENTS_PER_TENANT)}`;
    subjects.push({
      tenant,
      id: randomUUID(),
      externalId,
      sessions: sessionsFor(random, agentId, anchored, sessionBound, t),
    });
  };

  subject(0, SUBJECT_BIG, sizes.bigSubject);
  const l = sizes.layout;
  for (const size of [...l.midSubjects].reverse()) subject(0, midSubject(size), size);
  for (let i = 0; i < l.typicalSubjects; i++) subject(0, typicalSubject(i), l.typicalSize);
  for (let i = 0; i < l.storeSubjects; i++) subject(0, storeSubject(i), l.typicalSize);
  privates.push({ tenant: 0, agentId: AGENT_BIG, count: sizes.bigAgent, startedAt: new Date(t - 365 * DAY_MS) });

  // The rest: three quarters anchored to the other subjects, a tenth session-bound, the rest private.
  const rest = sizes.memories - specialMemories(sizes) - sizes.tenants * CANON_PER_TENANT;
  const others = Math.max(1, sizes.subjects - subjects.length);
  const otherTenant = (i: number): number => (sizes.tenants === 1 ? 0 : 1 + (i % (sizes.tenants - 1)));
  const privateTotal = Math.floor(rest * 0.15);
  const subjectTotal = rest - privateTotal;
  const weights = Array.from({ length: others }, () => 0.3 + random() * 1.4);
  const weightSum = weights.reduce((a, b) => a + b, 0);
  let given = 0;
  weights.forEach((w, i) => {
    const n = i === others - 1 ? subjectTotal - given : Math.floor((subjectTotal * w) / weightSum);
    given += n;
    const sessionBound = Math.floor(n * 0.12);
    subject(otherTenant(i), `subject-${i}`, n - sessionBound, sessionBound);
  });
  const agents = Math.max(1, (sizes.tenants === 1 ? 1 : sizes.tenants - 1) * AGENTS_PER_TENANT);
  for (let i = 0; i < agents; i++) {
    const count = Math.floor(privateTotal / agents) + (i < privateTotal % agents ? 1 : 0);
    privates.push({
      tenant: otherTenant(Math.floor(i / AGENTS_PER_TENANT)),
      agentId: `agent-${i % AGENTS_PER_TENANT}`,
      count,
      startedAt: new Date(t - 365 * DAY_MS * random()),
    });
  }
  return { sizes, tenantIds, subjects, privates, canonPerTenant: CANON_PER_TENANT };
}
