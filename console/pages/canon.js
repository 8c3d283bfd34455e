import { api } from '../api.js';
import { html, ErrorNote, Loading, Pager, scopesOf, Time, useLoad, usePaging } from '../ui.js';
import { useState } from '../lib.js';
import { DeleteButton } from './memory-parts.js';

/** Tenant-wide rules, part of every recall: any key reads them, admin keys write them. */
export function CanonPage({ identity }) {
  const isAdmin = scopesOf(identity).has('admin');
  const paging = usePaging([]);
  const [state, reload] = useLoad(
    () => api('GET', '/canon', { query: { limit: 50, cursor: paging.cursor } }),
    [paging.cursor],
  );
  const entries = state.data?.canon ?? [];
  return html`<h1>Canon</h1>
    <p class="muted">Tenant-wide policy, composed into every recall (at most 30% of its results).</p>
    ${isAdmin && html`<${AddCanon} identity=${identity} onAdded=${reload} />`}
    <${Loading} state=${state} />
    ${state.data && entries.length === 0 && html`<p>No canon yet.</p>`}
    ${
      entries.length > 0 &&
      html`<table>
        <thead>
          <tr>
            <th scope="col">Rule</th>
            <th scope="col">Agent</th>
            <th scope="col">Written</th>
            ${isAdmin && html`<th scope="col"><span class="visually-hidden">Actions</span></th>`}
          </tr>
        </thead>
        <tbody>
          ${entries.map(
            (c) =>
              html`<tr key=${c.id}>
                <td>${c.content}</td>
                <td><code>${c.agent_id}</code></td>
                <td><${Time} at=${c.created_at} /></td>
                ${
                  isAdmin &&
                  html`<td>
                    <${DeleteButton}
                      label="Delete"
                      confirmLabel="Delete this rule"
                      onConfirm=${async () => {
                        await api('DELETE', `/canon/${c.id}`);
                        reload();
                      }}
                    />
                  </td>`
                }
              </tr>`,
          )}
        </tbody>
      </table>`
    }
    <${Pager} paging=${paging} page=${state.data} />`;
}

function AddCanon({ identity, onAdded }) {
  const [agent, setAgent] = useState(identity.agent_ids?.[0] ?? 'admin');
  const [content, setContent] = useState('');
  const [error, setError] = useState(null);
  const submit = async (event) => {
    event.preventDefault();
    setError(null);
    try {
      await api('POST', '/canon', { body: { agent_id: agent, content } });
      setContent('');
      onAdded();
    } catch (e) {
      setError(e);
    }
  };
  return html`<form class="stack" onSubmit=${submit} aria-labelledby="add-canon">
    <h2 id="add-canon">Add a rule</h2>
    <label for="canon-content">Rule</label>
    <textarea
      id="canon-content"
      rows="2"
      required
      value=${content}
      onInput=${(e) => setContent(e.currentTarget.value)}
    />
    <label for="canon-agent">Written as agent</label>
    <input id="canon-agent" required value=${agent} onInput=${(e) => setAgent(e.currentTarget.value)} />
    <div><button type="submit">Add rule</button></div>
    <${ErrorNote} error=${error} />
  </form>`;
}
