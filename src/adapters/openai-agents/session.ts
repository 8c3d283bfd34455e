import { randomUUID } from 'node:crypto';
import type { AgentInputItem, Session } from '@openai/agents';
import { ok, type AgentMemoryClient } from '../../client/index.js';
import type { Memory } from '../memory-door.js';

/** The metadata field that holds the item itself; a session memory without it is not an item. */
const ITEM_FIELD = 'openai_agents_item';
const SEQ_FIELD = 'openai_agents_seq';
/** A memory's content is the item's text for recall, cut to this: the item is whole in its metadata. */
const CONTENT_CHARS = 4_000;
const PAGE = 200;

export interface AgentMemorySessionOptions {
  client: AgentMemoryClient;
  /** The agent whose session this is (`agent_id` of `POST /v1/sessions` and of each stored item). */
  agentId: string;
  /** An existing session of the service (its id); without it, one is started on first use. */
  sessionId?: string;
  /** The subject the session started on first use belongs to (`anchor_external_id`). */
  subject?: string;
}

/**
 * A Session of the OpenAI Agents SDK kept in one of the service's sessions: each conversation item is
 * a session memory whose content is the item's text (so that recall with this session finds what
 * was said) and whose metadata holds the item, whole, as the runner gave it.
 *
 * The service treats memories as beliefs: a store that repeats or contradicts one reinforces or
 * supersedes it. A transcript is not a set of beliefs (two turns may both say "yes"), so each item
 * is stored with a speaker of its own (`metadata.speaker`, e.g. "user 1b4e…"): memories of
 * different speakers are never merged nor superseded (docs/api.md §6). Items come back in the order
 * stored. The session's lifetime is the service's: once it is ended (`POST /v1/sessions/{id}/end`)
 * adding items is refused (409 session_ended), and 24 hours later its memories are deleted.
 */
export class AgentMemorySession implements Session {
  readonly #client: AgentMemoryClient;
  readonly #agentId: string;
  readonly #subject: string | undefined;
  #sessionId: Promise<string> | undefined;
  #lastSeq = 0;

  constructor(options: AgentMemorySessionOptions) {
    this.#client = options.client;
    this.#agentId = options.agentId;
    this.#subject = options.subject;
    if (options.sessionId !== undefined) this.#sessionId = Promise.resolve(options.sessionId);
  }

  getSessionId(): Promise<string> {
    this.#sessionId ??= ok(
      this.#client.POST('/v1/sessions', {
        body: {
          agent_id: this.#agentId,
          ...(this.#subject === undefined ? {} : { anchor_external_id: this.#subject }),
        },
      }),
    ).then(
      (session) => session.id,
      (error: unknown) => {
        // A failed start is not remembered: the next call tries again.
        this.#sessionId = undefined;
        throw error;
      },
    );
    return this.#sessionId;
  }

  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const items = (await this.#stored()).map((s) => s.item);
    return limit === undefined ? items : limit <= 0 ? [] : items.slice(-limit);
  }

  /** One store per item, in order: a failure leaves the items before it stored and throws. */
  async addItems(items: AgentInputItem[]): Promise<void> {
    const sessionId = await this.getSessionId();
    for (const item of items) {
      const role = roleOf(item);
      const stored = await ok(
        this.#client.POST('/v1/memories', {
          body: {
            agent_id: this.#agentId,
            session_id: sessionId,
            content: `${role}: ${itemText(item)}`.slice(0, CONTENT_CHARS),
            metadata: {
              speaker: `${role} ${randomUUID()}`,
              [SEQ_FIELD]: this.#nextSeq(),
              [ITEM_FIELD]: item,
            },
          },
        }),
      );
      if (stored.outcome !== 'created' || stored.metadata[ITEM_FIELD] === undefined) {
        // Only possible when the subject's profile already holds this very text: the service keeps
        // one copy of a fact and stored no new memory, so the item would be lost.
        throw new Error(
          `agent-memory: the item was not stored as a memory of its own (outcome ${stored.outcome}, memory ${stored.id}); the subject's profile already holds the same text`,
        );
      }
    }
  }

  async popItem(): Promise<AgentInputItem | undefined> {
    const last = (await this.#stored()).at(-1);
    if (!last) return undefined;
    await this.#delete(last.id);
    return last.item;
  }

  async clearSession(): Promise<void> {
    for (const { id } of await this.#stored()) await this.#delete(id);
  }

  async #delete(id: string): Promise<void> {
    const { response, error } = await this.#client.DELETE('/v1/memories/{id}', { params: { path: { id } } });
    // Already gone (another caller, or the session expired): what was asked holds.
    if (response.status === 404) return;
    await ok(Promise.resolve({ data: undefined, error, response }));
  }

  /** The session's items, oldest first, with the ids of the memories that hold them. */
  async #stored(): Promise<{ id: string; item: AgentInputItem }[]> {
    const sessionId = await this.getSessionId();
    const memories: Memory[] = [];
    let cursor: string | undefined;
    do {
      const page = await ok(
        this.#client.GET('/v1/sessions/{id}/memories', {
          params: { path: { id: sessionId }, query: { limit: PAGE, ...(cursor ? { cursor } : {}) } },
        }),
      );
      memories.push(...page.memories);
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    // The service lists by creation time; the sequence orders items stored within one millisecond.
    return memories
      .filter((m) => m.metadata[ITEM_FIELD] !== undefined)
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || seqOf(a) - seqOf(b))
      .map((m) => ({ id: m.id, item: m.metadata[ITEM_FIELD] as AgentInputItem }));
  }

  /** Increasing within this process even when the clock stands still or steps back. */
  #nextSeq(): number {
    this.#lastSeq = Math.max(this.#lastSeq + 1, Date.now() * 1000);
    return this.#lastSeq;
  }
}

const seqOf = (m: Memory): number => {
  const seq = m.metadata[SEQ_FIELD];
  return typeof seq === 'number' ? seq : 0;
};

function roleOf(item: AgentInputItem): string {
  const fields = item as Record<string, unknown>;
  if (typeof fields['role'] === 'string') return fields['role'];
  if (typeof fields['type'] === 'string') return fields['type'].replace(/_/g, ' ');
  return 'item';
}

/** What an item says, in words a recall can match: message text, a call and its arguments, a result. */
function itemText(item: AgentInputItem): string {
  const fields = item as Record<string, unknown>;
  const content = fields['content'] ?? fields['output'];
  let text = textOf(content);
  if (fields['type'] === 'function_call') text = `${String(fields['name'])}(${String(fields['arguments'])})`;
  return text.trim() || JSON.stringify(item);
}

function textOf(value: unknown): string {
  if (typeof value === 'string') return value;
  if (Array.isArray(value)) return value.map(textOf).filter(Boolean).join('\n');
  if (value && typeof value === 'object') {
    const part = value as Record<string, unknown>;
    for (const field of ['text', 'refusal', 'transcript']) if (typeof part[field] === 'string') return part[field];
  }
  return '';
}
