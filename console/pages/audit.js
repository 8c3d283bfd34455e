import { api } from '../api.js';
import { html, Loading, Pager, scopesOf, short, Time, useLoad, usePaging } from '../ui.js';
import { useState } from '../lib.js';
import { Changes } from './memory-parts.js';

const ACTIONS = [
  'created',
  'reinforced',
  'superseded',
  'corrected',
  'promoted',
  'merged',
  'deleted',
  'updated',
  'expired',
  'session_ended',
  'canon_written',
  'canon_deleted',
  'anchor_purged',
  'key_created',
  'key_revoked',
  'job_finished',
  'import_finished',
];

/** A subject filter may be typed as its external id: it is looked up before the trail is asked. */
async function loadTrail(filters, cursor) {
  let anchorId;
  if (filters.subject) {
    const found = await api('GET', '/anchors', { query: { anchor_external_id: filters.subject } });
    anchorId = found.anchors[0]?.id;
    if (!anchorId) return { events: [], next_cursor: null, unknownSubject: true };
  }
  return api('GET', '/audit', {
    query: {
      action: filters.action,
      anchor_id: anchorId,
      memory_id: filters.memory,
      since: filters.since ? new Date(filters.since).toISOString() : undefined,
      limit: 50,
      cursor,
    },
  });
}

/** The audit trail (admin), oldest first, filtered by action, subject, memory and time. */
export function AuditPage({ params, identity }) {
  const isAdmin = scopesOf(identity).has('admin');
  const filters = {
    action: params.get('action') ?? '',
    subject: params.get('subject') ?? '',
    memory: params.get('memory') ?? '',
    since: params.get('since') ?? '',
  };
  const [form, setForm] = useState(filters);
  const key = JSON.stringify(filters);
  const paging = usePaging([key]);
  const [state] = useLoad(
    () => (isAdmin ? loadTrail(filters, paging.cursor) : Promise.resolve(null)),
    [key, paging.cursor, isAdmin],
  );
  if (!isAdmin)
    return html`<h1>Audit trail</h1>
      <p role="alert">The audit trail needs an admin key.</p>`;
  const set = (name) => (e) => setForm({ ...form, [name]: e.currentTarget.value });
  const submit = (event) => {
    event.preventDefault();
    const query = new URLSearchParams(Object.entries(form).filter(([, v]) => v));
    location.hash = `#/audit${query.size ? `?${query}` : ''}`;
  };
  const events = state.data?.events ?? [];
  return html`<h1>Audit trail</h1>
    <p class="muted">Who changed what and when: ids, counts and confidences, never content. Oldest first.</p>
    <form class="filters" onSubmit=${submit}>
      <label
        >Action
        <select value=${form.action} onChange=${set('action')}>
          <option value="">any</option>
          ${ACTIONS.map((a) => html`<option value=${a}>${a}</option>`)}
        </select>
      </label>
      <label>Subject (external id) <input value=${form.subject} onInput=${set('subject')} /></label>
      <label>Memory id <input value=${form.memory} onInput=${set('memory')} size="36" /></label>
      <label>Since <input type="datetime-local" value=${form.since} onInput=${set('since')} /></label>
      <button type="submit">Filter</button>
    </form>
    <${Loading} state=${state} />
    ${state.data?.unknownSubject && html`<p role="alert">Not found: no subject <code>${filters.subject}</code>.</p>`}
    ${state.data && !state.data.unknownSubject && events.length === 0 && html`<p>No events.</p>`}
    ${
      events.length > 0 &&
      html`<table class="audit">
        <thead>
          <tr>
            <th scope="col">At</th>
            <th scope="col">Action</th>
            <th scope="col">Memory</th>
            <th scope="col">Subject</th>
            <th scope="col">Session</th>
            <th scope="col">Actor</th>
            <th scope="col">Changes</th>
          </tr>
        </thead>
        <tbody>
          ${events.map(
            (e) =>
              html`<tr key=${e.id}>
                <td><${Time} at=${e.at} /></td>
                <td>${e.action}</td>
                <td>${e.memory_id && html`<a href=${`#/memories/${e.memory_id}`}>${short(e.memory_id)}</a>`}</td>
                <td>${e.anchor_id && html`<a href=${`#/subjects/${e.anchor_id}`}>${short(e.anchor_id)}</a>`}</td>
                <td>${e.session_id && html`<code>${short(e.session_id)}</code>`}</td>
                <td>
                  ${e.actor.agent_id && html`<code>${e.actor.agent_id}</code> `}${e.actor.key_id && html`<span class="muted">key ${short(e.actor.key_id)}</span>`}
                </td>
                <td><${Changes} changes=${e.changes} /></td>
              </tr>`,
          )}
        </tbody>
      </table>`
    }
    <${Pager} paging=${paging} page=${state.data} />`;
}
