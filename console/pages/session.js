import { api } from '../api.js';
import { html, Loading, Pager, scopesOf, Time, useLoad, usePaging } from '../ui.js';
import { MemoryRow } from './memory-parts.js';

/** One session: its state and the memories stored in it, oldest first. */
export function SessionPage({ id, identity }) {
  const canWrite = scopesOf(identity).has('write');
  const paging = usePaging([id]);
  const [state, reload] = useLoad(
    () => api('GET', `/sessions/${id}/memories`, { query: { limit: 50, cursor: paging.cursor } }),
    [id, paging.cursor],
  );
  if (!state.data) return html`<h1>Session</h1><${Loading} state=${state} />`;
  const { session, memories } = state.data;
  return html`<h1>Session</h1>
    <dl class="facts summary">
      <div><dt>Subject</dt><dd>${session.anchor_id ? html`<a href=${`#/subjects/${session.anchor_id}`}><code>${session.anchor_external_id}</code></a>` : 'none'}</dd></div>
      <div><dt>Agent</dt><dd><code>${session.agent_id}</code></dd></div>
      <div><dt>Status</dt><dd>${session.status}</dd></div>
      <div><dt>Started</dt><dd><${Time} at=${session.started_at} /></dd></div>
      <div><dt>Ended</dt><dd><${Time} at=${session.ended_at} /></dd></div>
      <div><dt>Memories expire</dt><dd><${Time} at=${session.expires_at} /></dd></div>
      <div><dt>Id</dt><dd><code>${session.id}</code></dd></div>
    </dl>
    <h2>Memories stored in it</h2>
    ${memories.length === 0 && html`<p>No memories.</p>`}
    <ul class="memories">
      ${memories.map((m) => html`<${MemoryRow} key=${m.id} memory=${m} canWrite=${canWrite} onCorrected=${reload} onDeleted=${reload} />`)}
    </ul>
    <${Pager} paging=${paging} page=${state.data} />`;
}
