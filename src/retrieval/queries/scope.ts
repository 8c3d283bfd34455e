import { sql, type ExpressionBuilder, type Expression, type SqlBool } from 'kysely';
import { anyOf } from '../../db/arrays.js';
import { memoryFilterSql } from '../../db/memory-filter.js';
import type { Database } from '../../db/schema.js';
import type { ScopeUnit } from '../../db/scope-stats.js';
import type { subjectIdByExternalId } from '../../domain/subjects/anchors.js';
import type { MemoryFilter } from '../../filter/language.js';
import type { Binding } from '../../vocabulary.js';

/** Which memories a recall may see, resolved to ids; enforced in SQL by scopeFilter. */
export interface RecallScope {
  tenantId: string;
  agentId: string;
  /** The subject whose anchored memories are visible; null for none. */
  anchorId: string | null;
  /** The session whose session memories are visible; null for none. */
  sessionId: string | null;
  /**
   * Session memories formed in an earlier session of the subject and stored again in this one
   * (memory_mentions): visible with the session's own. Their statistics are kept in the sessions
   * they were formed in, whose units the scope's statistics then include (an approximation BM25
   * can afford).
   */
  mentioned?: { memoryIds: readonly string[]; formedIn: readonly string[] };
  includeSuperseded: boolean;
  /**
   * The session has outlived its expiry: of its memories only the pinned ones remain (a pinned
   * memory is never ended with its session), and no later session's mentions count.
   */
  sessionExpired?: boolean;
  /** The moment expiry is judged at (the core's clock): a memory expired by then is hidden, unless pinned. */
  now?: Date;
  /**
   * Recall as of this moment: only what was stored by then, and, superseded memories left out,
   * what had not been superseded by then.
   */
  asOf?: Date;
  /** The caller's filter (src/filter/language.ts): it only ever narrows what the rest lets through. */
  filter?: MemoryFilter | null;
}

/** A scope as recall resolved it before reading: `named` is a subject the scope read looks up by external id. */
export interface ScopeToRead {
  scope: RecallScope;
  named?: ReturnType<typeof subjectIdByExternalId>;
}

/** The parts of a scope, ranked apart: the subject's memories (private, anchored, session) and canon. */
export type Part = 'subject' | 'canon';

type MemoryEb = ExpressionBuilder<Database & { m: Database['memories'] }, 'm'>;

/**
 * A binding as a literal in the statement's text, not a parameter: the partial indexes (private
 * memories by agent, canon) serve only statements whose text implies their predicate, which a
 * prepared statement's plan, made without the values, cannot know of a parameter.
 */
const binding = (b: Binding) => sql.lit(b);

/**
 * The visibility rule of docs/api.md §5, as SQL: never another agent's private memory, anchor or
 * tenant. `subject` is the subject whose anchored memories are visible: the scope's, or a subquery
 * of the statement that resolves it (NAMED_SUBJECT).
 */
export function scopeFilter(
  eb: MemoryEb,
  scope: RecallScope,
  part: Part,
  subject: string | Expression<string | null> | null = scope.anchorId,
): Expression<SqlBool> {
  const visible =
    part === 'canon'
      ? [eb('m.binding', '=', binding('canon'))]
      : [
          eb.and([eb('m.binding', '=', binding('private')), eb('m.agent_id', '=', scope.agentId)]),
          ...(subject !== null
            ? [eb.and([eb('m.binding', '=', binding('anchored')), eb('m.anchor_id', '=', subject)])]
            : []),
          ...(scope.sessionId
            ? [
                eb.and([
                  eb('m.binding', '=', binding('session')),
                  scope.sessionExpired
                    ? eb.and([eb('m.session_id', '=', scope.sessionId), eb('m.pinned', '=', true)])
                    : scope.mentioned && scope.mentioned.memoryIds.length > 0
                      ? eb.or([
                          eb('m.session_id', '=', scope.sessionId),
                          anyOf(sql.ref('m.id'), scope.mentioned.memoryIds),
                        ])
                      : eb('m.session_id', '=', scope.sessionId),
                ]),
              ]
            : []),
        ];
  return eb.and([
    eb('m.tenant_id', '=', scope.tenantId),
    ...(scope.includeSuperseded ? [] : [current(eb, scope.asOf)]),
    eb.or(visible),
    ...timeConditions(eb, scope),
    ...(scope.filter ? [memoryFilterSql(scope.filter)] : []),
  ]);
}

/** Active, or, as of a moment, active then: superseded only after it. */
function current(eb: MemoryEb, asOf: Date | undefined): Expression<SqlBool> {
  const active = eb('m.status', '=', sql.lit('active'));
  return asOf ? eb.or([active, eb('m.superseded_at', '>', asOf)]) : active;
}

/**
 * docs/api.md "Time": an expired memory leaves recall at once, before the sweeper deletes it
 * (a pinned one never expires); as of a moment, what was stored after it was not there yet.
 */
function timeConditions(eb: MemoryEb, scope: RecallScope): Expression<SqlBool>[] {
  return [
    ...(scope.now
      ? [eb.or([eb('m.expires_at', 'is', null), eb('m.expires_at', '>', scope.now), eb('m.pinned', '=', true)])]
      : []),
    ...(scope.asOf ? [eb('m.created_at', '<=', scope.asOf)] : []),
  ];
}

/** The units a part of the scope is made of (src/db/scope-stats.ts). */
export function scopeUnits(scope: RecallScope, part: Part): ScopeUnit[] {
  if (part === 'canon') return [{ binding: 'canon' }];
  return [
    { binding: 'private', agentId: scope.agentId },
    ...(scope.anchorId ? [{ binding: 'anchored' as const, anchorId: scope.anchorId }] : []),
    ...(scope.sessionId ? [{ binding: 'session' as const, sessionId: scope.sessionId }] : []),
    ...(scope.mentioned?.formedIn ?? []).map((sessionId) => ({ binding: 'session' as const, sessionId })),
  ];
}
