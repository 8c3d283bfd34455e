import type { CallbackManagerForRetrieverRun } from '@langchain/core/callbacks/manager';
import { Document } from '@langchain/core/documents';
import { BaseRetriever, type BaseRetrieverInput } from '@langchain/core/retrievers';
import { DEFAULT_RECALL_LIMIT, recall, type MemoryScope } from '../memory-door.js';

/**
 * agent-memory for LangChain JS (`@langchain/core`): a retriever over recall. The LangGraph store is
 * `agent-memory/langgraph`, apart, so that a retriever needs no LangGraph installed. Both are peer
 * dependencies: imported, never bundled.
 */

export type { MemoryScope } from '../memory-door.js';

export interface AgentMemoryRetrieverInput extends BaseRetrieverInput, MemoryScope {
  /** How many memories a query returns at most (default 10, at most 100). */
  limit?: number;
}

/**
 * Recall as a retriever: each memory is a Document whose pageContent is its text, whose id is the
 * memory's, and whose metadata carries its binding, subject, session, score and the memory's own
 * metadata (under `metadata`).
 */
export class AgentMemoryRetriever extends BaseRetriever {
  lc_namespace = ['agent_memory', 'retrievers'];
  readonly #scope: MemoryScope;
  readonly #limit: number;

  constructor(fields: AgentMemoryRetrieverInput) {
    const { client, agentId, subject, sessionId, limit = DEFAULT_RECALL_LIMIT, ...base } = fields;
    super(base);
    this.#scope = {
      client,
      agentId,
      ...(subject === undefined ? {} : { subject }),
      ...(sessionId === undefined ? {} : { sessionId }),
    };
    this.#limit = limit;
  }

  override async _getRelevantDocuments(
    query: string,
    _runManager?: CallbackManagerForRetrieverRun,
  ): Promise<Document[]> {
    const results = await recall(this.#scope, query, this.#limit);
    return results.map(
      (r) =>
        new Document({
          id: r.id,
          pageContent: r.content,
          metadata: {
            binding: r.binding,
            agent_id: r.agent_id,
            subject: r.anchor_external_id,
            session_id: r.session_id,
            score: r.score,
            confidence: r.effective_confidence,
            created_at: r.created_at,
            metadata: r.metadata,
          },
        }),
    );
  }
}
