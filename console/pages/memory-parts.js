import { api } from '../api.js';
import { html, ErrorNote, num, short, Time, useLoad } from '../ui.js';
import { useEffect, useRef, useState } from '../lib.js';

/** Focus moves to what just appeared (the form, the confirmation), once, so the keyboard follows. */
function useFocusOnMount() {
  const ref = useRef(null);
  useEffect(() => ref.current?.focus(), []);
  return ref;
}

/** Decayed confidence beside the stored one, so that decay is visible. */
export function Confidence({ memory }) {
  const lost = memory.confidence > 0 ? 1 - memory.effective_confidence / memory.confidence : 0;
  return html`<span
    >${num(memory.effective_confidence)}${lost >= 0.005 ? html` <span class="muted">(from ${num(memory.confidence)}, −${Math.round(lost * 100)}% decay)</span>` : ''}</span
  >`;
}

/** Where a memory came from: the agent, a session, an ingest of a conversation. */
export function Provenance({ memory }) {
  const ingest = memory.metadata?.ingest;
  return html`<span class="provenance">
    agent <code>${memory.agent_id}</code>
    ${memory.session_id && html`, session <code title=${memory.session_id}>${short(memory.session_id)}</code>`}
    ${
      ingest
        ? html`, ingested${ingest.conversation_id ? html` from conversation <code>${ingest.conversation_id}</code>` : ''}${ingest.message_id ? html` (message <code>${ingest.message_id}</code>)` : ''} by ${ingest.extractor}`
        : ', stored directly'
    }
  </span>`;
}

/** The memory's audit trail: who did what, never content. */
export function History({ id }) {
  const [state] = useLoad(() => api('GET', `/memories/${id}/history`), [id]);
  if (state.loading) return html`<p class="loading">Loading history…</p>`;
  if (state.error) return html`<${ErrorNote} error=${state.error} />`;
  return html`<ol class="history">
    ${state.data.events.map(
      (e) =>
        html`<li>
          <${Time} at=${e.at} /> <strong>${e.action}</strong>
          ${e.actor.agent_id && html` by agent <code>${e.actor.agent_id}</code>`}
          ${e.actor.key_id && html` with key <code title=${e.actor.key_id}>${short(e.actor.key_id)}</code>`}
          <${Changes} changes=${e.changes} />
        </li>`,
    )}
  </ol>`;
}

const isId = (v) => typeof v === 'string' && /^[0-9a-f-]{36}$/.test(v);

export function Changes({ changes }) {
  const entries = Object.entries(changes ?? {});
  if (entries.length === 0) return null;
  return html`<span class="changes">
    ${entries.map(
      ([k, v]) =>
        html`<span class="change"
          >${k}:
          ${isId(v) && /superseded_by|corrects|merged_into|merged_from/.test(k) ? html`<a href=${`#/memories/${v}`}>${short(v)}</a>` : html`<code>${Array.isArray(v) ? v.join(', ') : String(v)}</code>`}</span
        > `,
    )}
  </span>`;
}

/** Pinned and expiry, as one line: what keeps a memory and what ends it. */
export function Life({ memory }) {
  return html`<span class="life">
    ${memory.pinned ? html`<strong>pinned</strong> (no decay, no expiry)` : 'not pinned'}${memory.expires_at ? html`, expires <${Time} at=${memory.expires_at} />` : memory.pinned ? '' : ', never expires'}
  </span>`;
}

/** A datetime-local value (the browser's time zone) for a moment, and back. */
const toLocalInput = (iso) => {
  const d = new Date(iso);
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16);
};

/** Pin or unpin a memory and set or clear its expiry, in place (PATCH without content). */
export function LifeControls({ memory, onChanged }) {
  const [expiry, setExpiry] = useState(memory.expires_at ? toLocalInput(memory.expires_at) : '');
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const fieldId = `expiry-${memory.id}`;
  const change = async (body) => {
    setBusy(true);
    setError(null);
    try {
      onChanged(await api('PATCH', `/memories/${memory.id}`, { body }));
    } catch (e) {
      setError(e);
    }
    setBusy(false);
  };
  const setIt = (event) => {
    event.preventDefault();
    if (expiry) change({ expires_at: new Date(expiry).toISOString() });
  };
  return html`<form class="life-controls" onSubmit=${setIt}>
    <button type="button" disabled=${busy} onClick=${() => change({ pinned: !memory.pinned })}>
      ${memory.pinned ? 'Unpin' : 'Pin'}
    </button>
    <label for=${fieldId}>Expires at</label>
    <input id=${fieldId} type="datetime-local" value=${expiry} onInput=${(e) => setExpiry(e.currentTarget.value)} />
    <button type="submit" disabled=${busy || !expiry}>Set expiry</button>
    ${memory.expires_at && html`<button type="button" class="secondary" disabled=${busy} onClick=${() => change({ expires_at: null })}>Clear expiry</button>`}
    <${ErrorNote} error=${error} />
  </form>`;
}

/** Edit a memory's content: the service stores the corrected text as a new memory that supersedes it. */
export function CorrectForm({ memory, onDone, onCancel }) {
  const [content, setContent] = useState(memory.content);
  const [error, setError] = useState(null);
  const [busy, setBusy] = useState(false);
  const fieldId = `correct-${memory.id}`;
  const focus = useFocusOnMount();
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onDone(await api('PATCH', `/memories/${memory.id}`, { body: { content } }));
    } catch (e) {
      setError(e);
      setBusy(false);
    }
  };
  return html`<form class="correct" onSubmit=${submit}>
    <label for=${fieldId}>Corrected content</label>
    <textarea
      id=${fieldId}
      rows="3"
      required
      value=${content}
      onInput=${(e) => setContent(e.currentTarget.value)}
      ref=${focus}
    />
    <div class="actions">
      <button type="submit" disabled=${busy}>Save correction</button>
      <button type="button" class="secondary" onClick=${onCancel}>Cancel</button>
    </div>
    <${ErrorNote} error=${error} />
  </form>`;
}

function ConfirmButton({ onClick, label }) {
  const focus = useFocusOnMount();
  return html`<button type="button" class="danger" onClick=${onClick} ref=${focus}>${label}</button>`;
}

/** Two steps, so that a stray Enter or click never deletes. */
export function DeleteButton({ label, confirmLabel, onConfirm }) {
  const [asking, setAsking] = useState(false);
  const [error, setError] = useState(null);
  if (!asking) return html`<button type="button" class="danger" onClick=${() => setAsking(true)}>${label}</button>`;
  const confirm = async () => {
    try {
      await onConfirm();
    } catch (e) {
      setError(e);
    }
  };
  return html`<span class="confirm">
    <${ConfirmButton} onClick=${confirm} label=${confirmLabel} />
    <button type="button" class="secondary" onClick=${() => setAsking(false)}>Cancel</button>
    <${ErrorNote} error=${error} />
  </span>`;
}

/** One memory in a list: its numbers, where it came from, its trail on demand, and what the key may do. */
export function MemoryRow({ memory, canWrite, onCorrected, onDeleted }) {
  const [editing, setEditing] = useState(false);
  const [showHistory, setShowHistory] = useState(false);
  return html`<li class="memory" data-memory-id=${memory.id}>
    <p class="content">${memory.content}</p>
    <dl class="facts">
      <div>
        <dt>Binding</dt>
        <dd>${memory.binding}</dd>
      </div>
      <div>
        <dt>Status</dt>
        <dd>${memory.status}</dd>
      </div>
      <div>
        <dt>Confidence</dt>
        <dd><${Confidence} memory=${memory} /></dd>
      </div>
      <div>
        <dt>Reinforced</dt>
        <dd>
          ${memory.reinforcement_count} time${memory.reinforcement_count === 1 ? '' : 's'}, last <${Time} at=${memory.last_reinforced_at} />
        </dd>
      </div>
      <div>
        <dt>From</dt>
        <dd><${Provenance} memory=${memory} /></dd>
      </div>
      <div>
        <dt>Kept</dt>
        <dd><${Life} memory=${memory} /></dd>
      </div>
    </dl>
    <div class="actions">
      <a href=${`#/memories/${memory.id}`}>Details</a>
      <button
        type="button"
        class="secondary"
        aria-expanded=${showHistory}
        onClick=${() => setShowHistory(!showHistory)}
      >
        History
      </button>
      ${canWrite && memory.status === 'active' && !editing && html`<button type="button" onClick=${() => setEditing(true)}>Correct</button>`}
      ${
        canWrite &&
        html`<${DeleteButton}
          label="Delete"
          confirmLabel="Delete this memory"
          onConfirm=${async () => {
            await api('DELETE', `/memories/${memory.id}`);
            onDeleted(memory);
          }}
        />`
      }
    </div>
    ${editing && html`<${CorrectForm} memory=${memory} onCancel=${() => setEditing(false)} onDone=${(fixed) => (setEditing(false), onCorrected(fixed))} />`}
    ${showHistory && html`<${History} id=${memory.id} />`}
  </li>`;
}
