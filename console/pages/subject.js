import { api } from '../api.js';
import { html, ErrorNote, Loading, num, Pager, plural, scopesOf, short, Time, useLoad, usePaging } from '../ui.js';
import { useState } from '../lib.js';
import { MemoryRow, Provenance } from './memory-parts.js';

/** One subject: its durable profile, its sessions, a recall box, and (admin) its erasure. */
export function SubjectPage({ id, identity }) {
  const can = scopesOf(identity);
  const [anchorState, reloadAnchor] = useLoad(() => api('GET', `/anchors/${id}`), [id]);
  const [purged, setPurged] = useState(null);
  if (purged) {
    return html`<h1>Subject erased</h1>
      <p role="status" class="notice"><code>${purged.external}</code> is erased: ${plural(purged.deleted.memories, 'memory', 'memories')} and ${plural(purged.deleted.sessions, 'session')} deleted, with every audit event naming them. One <code>anchor_purged</code> event with these counts remains.</p>
      <p><a href="#/subjects">Back to subjects</a></p>`;
  }
  if (!anchorState.data)
    return html`<h1>Subject</h1>
      <${Loading} state=${anchorState} />`;
  const anchor = anchorState.data;
  return html`<h1>Subject <code>${anchor.anchor_external_id}</code></h1>
    <dl class="facts summary">
      ${
        anchor.name &&
        html`<div>
          <dt>Name</dt>
          <dd>${anchor.name}</dd>
        </div>`
      }
      <div>
        <dt>Active memories</dt>
        <dd>${anchor.memory_count}</dd>
      </div>
      <div>
        <dt>Last activity</dt>
        <dd><${Time} at=${anchor.last_activity_at} /></dd>
      </div>
      <div>
        <dt>Created</dt>
        <dd><${Time} at=${anchor.created_at} /></dd>
      </div>
      <div>
        <dt>Id</dt>
        <dd><code>${anchor.id}</code></dd>
      </div>
    </dl>
    <${Profile} anchor=${anchor} canWrite=${can.has('write')} onChange=${reloadAnchor} />
    <${Superseded} anchorId=${anchor.id} key=${anchor.memory_count} />
    <${Sessions} anchorId=${anchor.id} />
    <${RecallBox} anchor=${anchor} identity=${identity} />
    ${can.has('admin') && html`<${Purge} anchor=${anchor} onPurged=${setPurged} />`}`;
}

function Profile({ anchor, canWrite, onChange }) {
  const paging = usePaging([anchor.id]);
  const [state, reload] = useLoad(
    () => api('GET', `/anchors/${anchor.id}/memories`, { query: { limit: 50, cursor: paging.cursor } }),
    [anchor.id, paging.cursor],
  );
  const [notice, setNotice] = useState(null);
  const changed = (message) => {
    setNotice(message);
    reload();
    onChange();
  };
  const memories = state.data?.memories ?? [];
  return html`<section aria-labelledby="profile-heading">
    <h2 id="profile-heading">Durable profile</h2>
    <p class="muted">
      Active memories of this subject, highest effective (decayed) confidence first, as recall weighs them.
    </p>
    ${notice && html`<p role="status" class="notice">${notice}</p>`}
    <${Loading} state=${state} />
    ${state.data && memories.length === 0 && html`<p>No durable memories.</p>`}
    <ul class="memories">
      ${memories.map(
        (m) =>
          html`<${MemoryRow}
            key=${m.id}
            memory=${m}
            canWrite=${canWrite}
            onCorrected=${(fixed) =>
              changed(
                html`Corrected. The old memory <a href=${`#/memories/${fixed.corrects}`}>${short(fixed.corrects)}</a> is
                  now superseded by <a href=${`#/memories/${fixed.id}`}>${short(fixed.id)}</a>.`,
              )}
            onDeleted=${() => changed('Memory deleted.')}
          />`,
      )}
    </ul>
    <${Pager} paging=${paging} page=${state.data} />
  </section>`;
}

/** What the profile no longer holds: superseded memories, each linking to its page and its successor. */
function Superseded({ anchorId }) {
  const [open, setOpen] = useState(false);
  return html`<section aria-labelledby="superseded-heading">
    <h2 id="superseded-heading">Superseded memories</h2>
    <button type="button" class="secondary" aria-expanded=${open} onClick=${() => setOpen(!open)}>
      ${open ? 'Hide superseded memories' : 'Show superseded memories'}
    </button>
    ${open && html`<${SupersededList} anchorId=${anchorId} />`}
  </section>`;
}

function SupersededList({ anchorId }) {
  const paging = usePaging([anchorId]);
  const [state] = useLoad(
    () =>
      api('GET', `/anchors/${anchorId}/memories`, {
        query: { status: 'superseded', limit: 50, cursor: paging.cursor },
      }),
    [anchorId, paging.cursor],
  );
  const memories = state.data?.memories ?? [];
  return html`<${Loading} state=${state} />
    ${state.data && memories.length === 0 && html`<p>No superseded memories.</p>`}
    <ul class="superseded">
      ${memories.map(
        (m) =>
          html`<li key=${m.id} data-memory-id=${m.id}>
            <a href=${`#/memories/${m.id}`}>${m.content}</a>
            <span class="muted">
              — superseded by <a href=${`#/memories/${m.superseded_by}`}>${short(m.superseded_by)}</a>, <${Time}
                at=${m.updated_at}
              />
            </span>
          </li>`,
      )}
    </ul>
    <${Pager} paging=${paging} page=${state.data} />`;
}

function sessionState(s) {
  if (s.status === 'active') return 'active';
  if (s.expires_at && new Date(s.expires_at) > new Date()) return 'ended, memories expiring';
  return 'ended, expired';
}

function Sessions({ anchorId }) {
  const paging = usePaging([anchorId]);
  const [state] = useLoad(
    () => api('GET', `/anchors/${anchorId}/sessions`, { query: { limit: 20, cursor: paging.cursor } }),
    [anchorId, paging.cursor],
  );
  const sessions = state.data?.sessions ?? [];
  return html`<section aria-labelledby="sessions-heading">
    <h2 id="sessions-heading">Sessions</h2>
    <${Loading} state=${state} />
    ${state.data && sessions.length === 0 && html`<p>No sessions.</p>`}
    ${
      sessions.length > 0 &&
      html`<table>
        <thead>
          <tr>
            <th scope="col">Session</th>
            <th scope="col">Agent</th>
            <th scope="col">State</th>
            <th scope="col">Started</th>
            <th scope="col">Ended</th>
            <th scope="col">Memories expire</th>
          </tr>
        </thead>
        <tbody>
          ${sessions.map(
            (s) =>
              html`<tr>
                <th scope="row"><a href=${`#/sessions/${s.id}`}><code title=${s.id}>${short(s.id)}</code></a></th>
                <td><code>${s.agent_id}</code></td>
                <td>${sessionState(s)}</td>
                <td><${Time} at=${s.started_at} /></td>
                <td><${Time} at=${s.ended_at} /></td>
                <td><${Time} at=${s.expires_at} /></td>
              </tr>`,
          )}
        </tbody>
      </table>`
    }
    <${Pager} paging=${paging} page=${state.data} />
  </section>`;
}

/**
 * The agents that wrote about the subject, most recent first, that the key may act as: recall as
 * one of them shows what it would get (its private memories too); 'console' has none.
 */
function useSubjectAgents(anchorId, identity) {
  const [state] = useLoad(() => api('GET', `/anchors/${anchorId}/memories`, { query: { limit: 200 } }), [anchorId]);
  const seen = [...(state.data?.memories ?? [])]
    .sort((a, b) => (a.last_reinforced_at < b.last_reinforced_at ? 1 : -1))
    .map((m) => m.agent_id);
  const bound = identity.agent_ids;
  return [...new Set(seen)].filter((a) => !bound || bound.includes(a));
}

function RecallBox({ anchor, identity }) {
  const agents = useSubjectAgents(anchor.id, identity);
  const fallback = identity.agent_ids?.length === 1 ? identity.agent_ids[0] : (agents[0] ?? 'console');
  const [typed, setAgent] = useState(null);
  const agent = typed ?? fallback;
  const [query, setQuery] = useState('');
  const [result, setResult] = useState(null);
  const [error, setError] = useState(null);
  const submit = async (event) => {
    event.preventDefault();
    setError(null);
    try {
      setResult(
        await api('GET', '/memories/recall', {
          query: { agent_id: agent, query, anchor_id: anchor.id, limit: 10 },
        }),
      );
    } catch (e) {
      setResult(null);
      setError(e);
    }
  };
  return html`<section aria-labelledby="recall-heading">
    <h2 id="recall-heading">Recall</h2>
    <p class="muted">
      What an agent would get for this subject: its memories, the agent's private ones and canon, with the parts of each
      score.
    </p>
    <form class="inline" onSubmit=${submit}>
      <label for="recall-agent">Agent</label>
      <input
        id="recall-agent"
        required
        list="recall-agents"
        value=${agent}
        onInput=${(e) => setAgent(e.currentTarget.value)}
        size="14"
      />
      <datalist id="recall-agents">${agents.map((a) => html`<option key=${a} value=${a} />`)}</datalist>
      <label for="recall-query">Query</label>
      <input
        id="recall-query"
        type="search"
        required
        value=${query}
        onInput=${(e) => setQuery(e.currentTarget.value)}
      />
      <button type="submit">Recall</button>
    </form>
    <${ErrorNote} error=${error} />
    ${
      result &&
      (result.results.length === 0
        ? html`<p role="status">Nothing recalled.</p>`
        : html`<table class="recall">
              <thead>
                <tr>
                  <th scope="col">#</th>
                  <th scope="col">Memory</th>
                  <th scope="col" class="num">Score</th>
                  <th scope="col" class="num">Semantic</th>
                  <th scope="col" class="num">Lexical</th>
                  <th scope="col" class="num">Confidence</th>
                  <th scope="col" class="num">Prior</th>
                  <th scope="col" class="num">Recency</th>
                </tr>
              </thead>
              <tbody>
                ${result.results.map(
                  (r, i) =>
                    html`<tr>
                      <td>${i + 1}</td>
                      <td>
                        <a href=${`#/memories/${r.id}`}>${r.content}</a><br /><span class="muted"
                          >${r.binding} · <${Provenance} memory=${r}
                        /></span>
                      </td>
                      <td class="num"><strong>${num(r.score, 3)}</strong></td>
                      <td class="num">${num(r.score_details.semantic, 3)}</td>
                      <td class="num">${num(r.score_details.lexical, 3)}</td>
                      <td class="num">${num(r.score_details.confidence, 3)}</td>
                      <td class="num">${num(r.score_details.prior, 3)}</td>
                      <td class="num">${num(r.score_details.recency, 3)}</td>
                    </tr>`,
                )}
              </tbody>
            </table>
            <p class="muted">
              score = (0.5 × semantic + 0.5 × lexical) × prior × (0.5 + 0.5 × confidence) × recency
            </p>`)
    }
  </section>`;
}

function Purge({ anchor, onPurged }) {
  const [typed, setTyped] = useState('');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const matches = typed === anchor.anchor_external_id;
  const submit = async (event) => {
    event.preventDefault();
    if (!matches) return;
    setBusy(true);
    try {
      const result = await api('DELETE', `/anchors/${anchor.id}`, { query: { purge: 'true' } });
      onPurged({ external: anchor.anchor_external_id, deleted: result.deleted });
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return html`<section aria-labelledby="purge-heading" class="danger-zone">
    <h2 id="purge-heading">Erase this subject</h2>
    <p>
      Purging deletes the subject, its memories of every binding, its sessions and every audit event naming them. It
      cannot be undone.
    </p>
    <form class="inline" onSubmit=${submit}>
      <label for="purge-confirm">Type <code>${anchor.anchor_external_id}</code> to confirm</label>
      <input id="purge-confirm" autocomplete="off" value=${typed} onInput=${(e) => setTyped(e.currentTarget.value)} />
      <button type="submit" class="danger" disabled=${!matches || busy}>Purge subject</button>
    </form>
    <${ErrorNote} error=${error} />
  </section>`;
}
