/**
 * agent-memory for LangGraph JS (`@langchain/langgraph`): a BaseStore over the service's subjects
 * and agents. `@langchain/langgraph` is a peer dependency: imported, never bundled.
 */
export { AgentMemoryStore, UnsupportedStoreOperation, type AgentMemoryStoreOptions } from './store.js';
