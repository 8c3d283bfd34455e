import { api } from '../api.js';
import { html, Loading, num, plural, scopesOf, Time, useLoad } from '../ui.js';
import { useState } from '../lib.js';
import { Confidence, CorrectForm, DeleteButton, History, Life, LifeControls, Provenance } from './memory-parts.js';

/** One memory, superseded or not, with its whole trail. */
export function MemoryPage({ id, identity }) {
  const can = scopesOf(identity);
  const [state, reload] = useLoad(() => api('GET', `/memories/${id}`), [id]);
  const [editing, setEditing] = useState(false);
  const [notice, setNotice] = useState(null);
  if (!state.data)
    return html`<h1>Memory</h1>
      <${Loading} state=${state} />`;
  const m = state.data;
  const where = m.anchor_id
    ? html`subject <a href=${`#/subjects/${m.anchor_id}`}><code>${m.anchor_external_id}</code></a>`
    : m.binding === 'canon'
      ? html`<a href="#/canon">canon</a>`
      : m.binding === 'session'
        ? 'a session'
        : html`agent <code>${m.agent_id}</code> (private)`;
  return html`<h1>Memory</h1>
    ${notice && html`<p role="status" class="notice">${notice}</p>`}
    ${
      m.status === 'superseded' &&
      html`<p class="notice" role="status">
        This memory is <strong>superseded</strong> by <a href=${`#/memories/${m.superseded_by}`}>the memory that replaced it</a>; recall leaves it out.
      </p>`
    }
    <blockquote class="content">${m.content}</blockquote>
    <dl class="facts summary">
      <div>
        <dt>Belongs to</dt>
        <dd>${where}</dd>
      </div>
      <div>
        <dt>Binding</dt>
        <dd>${m.binding}</dd>
      </div>
      <div>
        <dt>Status</dt>
        <dd id="memory-status">${m.status}</dd>
      </div>
      <div>
        <dt>Confidence</dt>
        <dd><${Confidence} memory=${m} /> (stored ${num(m.confidence)})</dd>
      </div>
      <div>
        <dt>Reinforced</dt>
        <dd>${plural(m.reinforcement_count, 'time')}, last <${Time} at=${m.last_reinforced_at} /></dd>
      </div>
      <div>
        <dt>From</dt>
        <dd><${Provenance} memory=${m} /></dd>
      </div>
      <div>
        <dt>Kept</dt>
        <dd id="memory-life"><${Life} memory=${m} /></dd>
      </div>
      <div>
        <dt>Happened</dt>
        <dd><${Time} at=${m.occurred_at} /></dd>
      </div>
      <div>
        <dt>Created</dt>
        <dd><${Time} at=${m.created_at} /></dd>
      </div>
      <div>
        <dt>Id</dt>
        <dd><code>${m.id}</code></dd>
      </div>
    </dl>
    ${
      can.has('write') &&
      m.binding !== 'canon' &&
      html`<div class="actions">
        ${m.status === 'active' && !editing && html`<button type="button" onClick=${() => setEditing(true)}>Correct</button>`}
        <${DeleteButton}
          label="Delete"
          confirmLabel="Delete this memory"
          onConfirm=${async () => {
            await api('DELETE', `/memories/${m.id}`);
            location.hash = m.anchor_id ? `#/subjects/${m.anchor_id}` : '#/subjects';
          }}
        />
      </div>`
    }
    ${
      can.has('write') &&
      m.status === 'active' &&
      m.binding !== 'canon' &&
      html`<${LifeControls}
        key=${m.updated_at}
        memory=${m}
        onChanged=${(changed) => {
          setNotice(changed.pinned ? 'Pinned: it does not decay or expire.' : 'Saved.');
          reload();
        }}
      />`
    }
    ${
      editing &&
      html`<${CorrectForm}
        memory=${m}
        onCancel=${() => setEditing(false)}
        onDone=${(fixed) => {
          setEditing(false);
          setNotice('Corrected: this memory is now superseded by the corrected one.');
          reload();
          return fixed;
        }}
      />`
    }
    <h2>History</h2>
    <${History} id=${m.id} key=${m.updated_at} />`;
}
