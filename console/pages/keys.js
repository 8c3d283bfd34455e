import { api } from '../api.js';
import { html, ErrorNote, Loading, scopesOf, Time, useLoad } from '../ui.js';
import { useState } from '../lib.js';
import { DeleteButton } from './memory-parts.js';

/** The tenant's keys (admin): create one (its secret shown once), list them, revoke one. */
export function KeysPage({ identity }) {
  const isAdmin = scopesOf(identity).has('admin');
  const [state, reload] = useLoad(() => (isAdmin ? api('GET', '/keys') : Promise.resolve(null)), [isAdmin]);
  if (!isAdmin)
    return html`<h1>Keys</h1>
      <p role="alert">Keys need an admin key.</p>`;
  const keys = state.data?.keys ?? [];
  return html`<h1>Keys</h1>
    <${CreateKey} onCreated=${reload} />
    <h2>All keys</h2>
    <${Loading} state=${state} />
    ${
      keys.length > 0 &&
      html`<table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Prefix</th>
            <th scope="col">Scopes</th>
            <th scope="col">Agents</th>
            <th scope="col">Created</th>
            <th scope="col">Last used</th>
            <th scope="col">State</th>
          </tr>
        </thead>
        <tbody>
          ${keys.map(
            (k) =>
              html`<tr key=${k.id} data-key-id=${k.id}>
                <th scope="row">
                  ${k.name}${k.id === identity.id ? html` <span class="muted">(this key)</span>` : ''}
                </th>
                <td><code>${k.key_prefix}</code></td>
                <td>${k.scopes.join(', ')}</td>
                <td>${k.agent_ids ? k.agent_ids.join(', ') : html`<span class="muted">any</span>`}</td>
                <td><${Time} at=${k.created_at} /></td>
                <td><${Time} at=${k.last_used_at} /></td>
                <td>
                  ${
                    k.revoked_at
                      ? html`revoked <${Time} at=${k.revoked_at} />`
                      : html`<${DeleteButton}
                          label="Revoke"
                          confirmLabel=${`Revoke ${k.name}`}
                          onConfirm=${async () => {
                            await api('DELETE', `/keys/${k.id}`);
                            reload();
                          }}
                        />`
                  }
                </td>
              </tr>`,
          )}
        </tbody>
      </table>`
    }`;
}

function CreateKey({ onCreated }) {
  const [name, setName] = useState('');
  const [scopes, setScopes] = useState(new Set(['read', 'write']));
  const [agents, setAgents] = useState('');
  const [created, setCreated] = useState(null);
  const [copied, setCopied] = useState(false);
  const [error, setError] = useState(null);
  const toggle = (scope) => {
    const next = new Set(scopes);
    if (next.has(scope)) next.delete(scope);
    else next.add(scope);
    setScopes(next);
  };
  const submit = async (event) => {
    event.preventDefault();
    setError(null);
    setCopied(false);
    const agentIds = agents
      .split(',')
      .map((a) => a.trim())
      .filter(Boolean);
    try {
      const key = await api('POST', '/keys', {
        body: { name, scopes: [...scopes], ...(agentIds.length > 0 ? { agent_ids: agentIds } : {}) },
      });
      setCreated(key);
      setName('');
      onCreated();
    } catch (e) {
      setError(e);
    }
  };
  const copy = async () => {
    await navigator.clipboard.writeText(created.api_key);
    setCopied(true);
  };
  return html`<form class="stack" onSubmit=${submit} aria-labelledby="create-key">
      <h2 id="create-key">Create a key</h2>
      <label for="key-name">Name</label>
      <input id="key-name" required value=${name} onInput=${(e) => setName(e.currentTarget.value)} />
      <fieldset>
        <legend>Scopes</legend>
        ${['read', 'write', 'admin'].map(
          (s) =>
            html`<label class="check"
              ><input type="checkbox" checked=${scopes.has(s)} onChange=${() => toggle(s)} /> ${s}</label
            >`,
        )}
      </fieldset>
      <label for="key-agents">Bound to agents (comma-separated; empty: any agent)</label>
      <input id="key-agents" value=${agents} onInput=${(e) => setAgents(e.currentTarget.value)} />
      <div><button type="submit">Create key</button></div>
      <${ErrorNote} error=${error} />
    </form>
    ${
      created &&
      html`<div class="notice" role="status">
        <p><strong>Copy the key for ${created.name} now: it is not shown again.</strong></p>
        <label for="new-key">New key</label>
        <input
          id="new-key"
          class="secret"
          readonly
          value=${created.api_key}
          onFocus=${(e) => e.currentTarget.select()}
        />
        <button type="button" onClick=${copy}>Copy</button>
        <button type="button" class="secondary" onClick=${() => setCreated(null)}>Done</button>
        ${copied && html`<span> Copied.</span>`}
      </div>`
    }`;
}
