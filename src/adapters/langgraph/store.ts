import {
  BaseStore,
  type GetOperation,
  type Item,
  type ListNamespacesOperation,
  type MatchCondition,
  type Operation,
  type OperationResults,
  type PutOperation,
  type SearchOperation,
} from '@langchain/langgraph';
import { ok, type AgentMemoryClient } from '../../client/index.js';
import type { Memory, RecallResult } from '../memory-door.js';

/** Recall answers at most this many memories: a search cannot reach past it. */
const RECALL_MAX = 100;
/** What a search answers: an item and, for a search with a query, its recall score. */
type SearchItem = Item & { score?: number };
const PAGE = 200;

export interface AgentMemoryStoreOptions {
  client: AgentMemoryClient;
  /** The agent that writes and recalls a subject's memories (`["subjects", …]` namespaces). */
  agentId: string;
}

/** An operation of the BaseStore contract that the service cannot carry out as asked (docs/integrations.md). */
export class UnsupportedStoreOperation extends Error {
  constructor(message: string) {
    super(`agent-memory: ${message} (docs/integrations.md, "LangGraph store")`);
    this.name = 'UnsupportedStoreOperation';
  }
}

type Place = { kind: 'subject'; subject: string } | { kind: 'agent'; agentId: string };

/**
 * A LangGraph BaseStore over the service. Two namespaces map:
 * - `["subjects", <subject>]`: the subject's anchored memories (its durable profile), written as
 *   the store's agent; every operation.
 * - `["agents", <agent id>]`: that agent's private memories; `put` and `search` with a query only,
 *   since the API lists no agent's private memories to find a key among.
 * An item is a memory: its text is the value's `content` (or `text`, or the fields `index` names),
 * its metadata holds `{ key, value }`. A key is found by reading the subject's profile. The service's
 * belief rules still apply: a put that says what another key's memory says reinforces that memory
 * (refused here: two keys cannot share one memory), and one that contradicts another key's memory
 * supersedes it, which then reads as absent.
 */
export class AgentMemoryStore extends BaseStore {
  readonly #client: AgentMemoryClient;
  readonly #agentId: string;

  constructor(options: AgentMemoryStoreOptions) {
    super();
    this.#client = options.client;
    this.#agentId = options.agentId;
  }

  /** Each operation in order, one after the other: a failure stops the batch and throws. */
  async batch<Op extends Operation[]>(operations: Op): Promise<OperationResults<Op>> {
    const results: unknown[] = [];
    for (const op of operations) {
      if ('namespacePrefix' in op) results.push(await this.#search(op));
      else if ('value' in op) results.push(await this.#put(op));
      else if ('key' in op) results.push(await this.#get(op));
      else results.push(await this.#listNamespaces(op));
    }
    return results as OperationResults<Op>;
  }

  async #get(op: GetOperation): Promise<Item | null> {
    const place = placeOf(op.namespace);
    if (place.kind === 'agent') {
      throw new UnsupportedStoreOperation(
        `get in ${show(op.namespace)}: the API lists no agent's private memories to find a key among; search them with a query, or keep keyed values under ["subjects", …]`,
      );
    }
    const found = await this.#findByKey(place.subject, op.key);
    return found ? itemOf(op.namespace, found) : null;
  }

  async #put(op: PutOperation): Promise<void> {
    const place = placeOf(op.namespace);
    if (op.value === null) {
      if (place.kind === 'agent') {
        throw new UnsupportedStoreOperation(
          `delete in ${show(op.namespace)}: the API lists no agent's private memories to find a key among; delete the memory by its id (DELETE /v1/memories/{id})`,
        );
      }
      const found = await this.#findByKey(place.subject, op.key);
      if (found) await this.#delete(found.id);
      return;
    }
    const content = contentOf(op.value, op.index);
    const metadata = { key: op.key, value: op.value };
    if (place.kind === 'agent') {
      await this.#store({ agent_id: place.agentId, content, metadata }, op);
      return;
    }
    const existing = await this.#findByKey(place.subject, op.key);
    if (!existing || existing.content === content) {
      // The same text again is a reinforcement of the same memory; a changed value of the same text
      // replaces its metadata, which only a new memory can carry.
      const body = { agent_id: this.#agentId, content, metadata, anchor_external_id: place.subject };
      if (!existing || sameJson(existing.metadata['value'], op.value)) return this.#store(body, op);
      // Not atomic: the service merges a store of the same text into the memory holding it, so the
      // old memory goes first. Should the store fail, the old value is put back before the error is thrown.
      await this.#delete(existing.id);
      try {
        await this.#store(body, op);
      } catch (error) {
        await ok(this.#client.POST('/v1/memories', { body: { ...body, metadata: existing.metadata } })).catch(
          () => undefined,
        );
        throw error;
      }
      return;
    }
    // A changed text is a correction: the old memory is kept, superseded by the new one.
    const corrected = await ok(
      this.#client.PATCH('/v1/memories/{id}', {
        params: { path: { id: existing.id } },
        body: { content, metadata },
      }),
    );
    if (corrected.metadata['key'] !== op.key) throw sharedMemory(op, corrected);
  }

  async #store(
    body: { agent_id: string; content: string; metadata: Record<string, unknown>; anchor_external_id?: string },
    op: PutOperation,
  ): Promise<void> {
    const stored = await ok(this.#client.POST('/v1/memories', { body }));
    if (stored.metadata['key'] !== op.key) throw sharedMemory(op, stored);
  }

  async #search(op: SearchOperation): Promise<SearchItem[]> {
    const namespace = op.namespacePrefix;
    if (namespace.length !== 2 || (namespace[0] !== 'subjects' && namespace[0] !== 'agents')) {
      throw new UnsupportedStoreOperation(
        `search under ${show(namespace)}: recall reads one subject or one agent; search ["subjects", <subject>] or ["agents", <agent id>]`,
      );
    }
    const place = placeOf(namespace);
    const { limit = 10, offset = 0, filter, query } = op;
    const matches = filterOf(filter);
    if (query) {
      if (offset + limit > RECALL_MAX) {
        throw new UnsupportedStoreOperation(`search with a query reaches the first ${RECALL_MAX} memories only`);
      }
      const found = await this.#recall(place, query, offset + limit);
      return found
        .filter((r) => matches(valueOf(r)))
        .slice(offset, offset + limit)
        .map((r) => ({ ...itemOf(namespace, r), score: r.score }));
    }
    if (place.kind === 'agent') {
      throw new UnsupportedStoreOperation(
        `search without a query in ${show(namespace)}: the API lists no agent's private memories; give a query`,
      );
    }
    const wanted = (found: Memory[]) => found.filter((m) => matches(valueOf(m)));
    const profile = await this.#profile(place.subject, (found) => wanted(found).length >= offset + limit);
    return wanted(profile)
      .slice(offset, offset + limit)
      .map((m) => itemOf(namespace, m));
  }

  async #recall(place: Place, query: string, limit: number): Promise<RecallResult[]> {
    const { results } = await ok(
      this.#client.GET('/v1/memories/recall', {
        params: {
          query:
            place.kind === 'subject'
              ? { agent_id: this.#agentId, query, limit, anchor_external_id: place.subject }
              : { agent_id: place.agentId, query, limit },
        },
      }),
    );
    // Recall adds the agent's private memories and canon to a subject's: a namespace holds its own only.
    return results.filter((r) =>
      place.kind === 'subject'
        ? r.binding === 'anchored' && r.anchor_external_id === place.subject
        : r.binding === 'private',
    );
  }

  async #listNamespaces(op: ListNamespacesOperation): Promise<string[][]> {
    for (const condition of op.matchConditions ?? []) {
      if (condition.matchType === 'prefix' && condition.path[0] === 'agents') {
        throw new UnsupportedStoreOperation('listing ["agents", …] namespaces: the API lists no agents');
      }
    }
    const namespaces: string[][] = [];
    let cursor: string | undefined;
    do {
      const page = await ok(
        this.#client.GET('/v1/anchors', { params: { query: { limit: PAGE, ...(cursor ? { cursor } : {}) } } }),
      );
      for (const anchor of page.anchors) {
        const namespace = ['subjects', anchor.anchor_external_id];
        if ((op.matchConditions ?? []).every((c) => matchesCondition(namespace, c))) namespaces.push(namespace);
      }
      cursor = page.next_cursor ?? undefined;
      // Cut to a depth, namespaces merge: only then is every subject needed to count them.
    } while (cursor && (op.maxDepth !== undefined || namespaces.length < op.offset + op.limit));
    const matching = namespaces;
    const depthCut =
      op.maxDepth === undefined ? matching : [...new Map(matching.map((ns) => [ns.slice(0, op.maxDepth), 0])).keys()];
    const unique = [...new Map(depthCut.map((ns) => [JSON.stringify(ns), ns])).values()];
    return unique.slice(op.offset, op.offset + op.limit);
  }

  /**
   * The subject's active memories, most confident first, page by page, until `enough` says so or
   * the profile ends; none for a subject not known yet.
   */
  async #profile(subject: string, enough: (found: Memory[]) => boolean = () => false): Promise<Memory[]> {
    const { anchors } = await ok(
      this.#client.GET('/v1/anchors', { params: { query: { anchor_external_id: subject } } }),
    );
    const anchor = anchors[0];
    if (!anchor) return [];
    const memories: Memory[] = [];
    let cursor: string | undefined;
    do {
      const page = await ok(
        this.#client.GET('/v1/anchors/{id}/memories', {
          params: { path: { id: anchor.id }, query: { limit: PAGE, ...(cursor ? { cursor } : {}) } },
        }),
      );
      memories.push(...page.memories);
      cursor = page.next_cursor ?? undefined;
    } while (cursor && !enough(memories));
    return memories;
  }

  /** The memory of the subject that holds `key`; a memory stored through another door answers to its id. */
  async #findByKey(subject: string, key: string): Promise<Memory | undefined> {
    const holds = (m: Memory) => m.metadata['key'] === key || (m.id === key && !('key' in m.metadata));
    return (await this.#profile(subject, (found) => found.some(holds))).find(holds);
  }

  async #delete(id: string): Promise<void> {
    const { response, error } = await this.#client.DELETE('/v1/memories/{id}', { params: { path: { id } } });
    // Gone meanwhile: what was asked holds.
    if (response.status === 404) return;
    await ok(Promise.resolve({ data: undefined, error, response }));
  }
}

function placeOf(namespace: string[]): Place {
  const [root, id, ...rest] = namespace;
  if (rest.length === 0 && id) {
    if (root === 'subjects') return { kind: 'subject', subject: id };
    if (root === 'agents') return { kind: 'agent', agentId: id };
  }
  throw new UnsupportedStoreOperation(
    `the namespace ${show(namespace)} maps to nothing of the service: use ["subjects", <subject>] or ["agents", <agent id>]`,
  );
}

const show = (namespace: string[]) => JSON.stringify(namespace);

/** The memory's text: the value's `content` or `text`, or the text of the fields `index` names. */
function contentOf(value: Record<string, unknown>, index: PutOperation['index']): string {
  const texts = (Array.isArray(index) && index.length > 0 ? index : ['content', 'text'])
    .map((path) => atPath(value, path))
    .filter((t): t is string => typeof t === 'string' && t.trim().length > 0);
  // Without an index, the first of content and text; with one, every field it names.
  const content = (Array.isArray(index) && index.length > 0 ? texts.join('\n') : (texts[0] ?? '')).trim();
  if (!content) {
    throw new UnsupportedStoreOperation(
      `a value needs its text in "content" or "text", or an index naming the fields that hold it (got the fields ${JSON.stringify(Object.keys(value))})`,
    );
  }
  return content;
}

function atPath(value: unknown, path: string): unknown {
  let at = value;
  for (const part of path.split('.')) {
    if (at === null || typeof at !== 'object') return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

function valueOf(memory: Memory): Record<string, unknown> {
  const value = memory.metadata['value'];
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : { content: memory.content };
}

function itemOf(namespace: string[], memory: Memory): Item {
  const key = memory.metadata['key'];
  return {
    namespace,
    key: typeof key === 'string' ? key : memory.id,
    value: valueOf(memory),
    createdAt: new Date(memory.created_at),
    updatedAt: new Date(memory.updated_at),
  };
}

/** Equality on the value's top-level fields; LangGraph's comparison operators ($gt, …) have no counterpart. */
function filterOf(filter: Record<string, unknown> | undefined): (value: Record<string, unknown>) => boolean {
  if (!filter) return () => true;
  for (const [field, expected] of Object.entries(filter)) {
    if (expected !== null && typeof expected === 'object' && Object.keys(expected).some((k) => k.startsWith('$'))) {
      throw new UnsupportedStoreOperation(`the filter on "${field}" uses an operator; only equality filters apply`);
    }
  }
  return (value) => Object.entries(filter).every(([field, expected]) => sameJson(value[field], expected));
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(canonical(a)) === JSON.stringify(canonical(b));
}

/** Objects with sorted keys: a value read back from the database may come with its keys reordered. */
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

function matchesCondition(namespace: string[], condition: MatchCondition): boolean {
  const { path } = condition;
  if (path.length > namespace.length) return false;
  const part = condition.matchType === 'prefix' ? namespace.slice(0, path.length) : namespace.slice(-path.length);
  return path.every((p, i) => p === '*' || p === part[i]);
}

/** Two keys cannot share one memory: the service kept one memory for one fact, under another key. */
function sharedMemory(op: PutOperation, memory: Memory): UnsupportedStoreOperation {
  const other = memory.metadata['key'];
  return new UnsupportedStoreOperation(
    `put of "${op.key}" in ${show(op.namespace)}: the service holds this fact as memory ${memory.id}${
      typeof other === 'string' ? ` under the key "${other}"` : ''
    } (it keeps one memory for one fact, and reinforced that one)`,
  );
}
