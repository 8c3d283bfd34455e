import { api } from '../api.js';
import { html, ErrorNote, Loading, Pager, scopesOf, short, Time, useLoad, usePaging } from '../ui.js';
import { useState } from '../lib.js';
import { DeleteButton } from './memory-parts.js';

const EVENTS = [
  'memory.created',
  'memory.reinforced',
  'memory.promoted',
  'memory.merged',
  'memory.superseded',
  'memory.corrected',
  'memory.deleted',
  'memory.expired',
  'subject.purged',
  'session.ended',
  'canon.written',
  'canon.deleted',
  'import.finished',
  'job.finished',
];

/** Enabled, paused by an admin, or disabled by the service (with why): the one thing to see first. */
function State({ hook }) {
  if (hook.enabled)
    return hook.failing_since
      ? html`<span class="warn">failing since <${Time} at=${hook.failing_since} /></span>`
      : html`<span>enabled</span>`;
  if (hook.disabled_reason) return html`<strong class="error-text">disabled by the service</strong>`;
  return html`<span class="muted">paused</span>`;
}

/** The tenant's webhook endpoints (admin): register one (its secret shown once), see their state. */
export function WebhooksPage({ identity }) {
  const isAdmin = scopesOf(identity).has('admin');
  const [state, reload] = useLoad(() => (isAdmin ? api('GET', '/webhooks') : Promise.resolve(null)), [isAdmin]);
  if (!isAdmin)
    return html`<h1>Webhooks</h1>
      <p role="alert">Webhooks need an admin key.</p>`;
  const hooks = state.data?.webhooks ?? [];
  return html`<h1>Webhooks</h1>
    <p class="muted">
      Signed (Standard Webhooks) POSTs of what changed: ids, kinds, agents and times, never content.
    </p>
    <${CreateWebhook} onCreated=${reload} />
    <h2>Endpoints</h2>
    <${Loading} state=${state} />
    ${state.data && hooks.length === 0 && html`<p class="muted">No endpoint yet.</p>`}
    ${
      hooks.length > 0 &&
      html`<table>
        <thead>
          <tr>
            <th scope="col">URL</th>
            <th scope="col">Events</th>
            <th scope="col">State</th>
            <th scope="col">Last success</th>
          </tr>
        </thead>
        <tbody>
          ${hooks.map(
            (w) =>
              html`<tr key=${w.id} data-webhook-id=${w.id}>
                <th scope="row">
                  <a href=${`#/webhooks/${w.id}`}>${w.url}</a>
                  ${w.description && html`<div class="muted">${w.description}</div>`}
                </th>
                <td>${w.events.join(', ')}</td>
                <td><${State} hook=${w} /></td>
                <td><${Time} at=${w.last_success_at} /></td>
              </tr>`,
          )}
        </tbody>
      </table>`
    }`;
}

function CreateWebhook({ onCreated }) {
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [all, setAll] = useState(true);
  const [events, setEvents] = useState(new Set());
  const [created, setCreated] = useState(null);
  const [error, setError] = useState(null);
  const toggle = (event) => {
    const next = new Set(events);
    if (next.has(event)) next.delete(event);
    else next.add(event);
    setEvents(next);
  };
  const submit = async (e) => {
    e.preventDefault();
    setError(null);
    try {
      const hook = await api('POST', '/webhooks', {
        body: { url: url.trim(), events: all ? ['*'] : [...events], ...(description ? { description } : {}) },
      });
      setCreated(hook);
      setUrl('');
      setDescription('');
      onCreated();
    } catch (err) {
      setError(err);
    }
  };
  return html`<form class="stack" onSubmit=${submit} aria-labelledby="create-webhook">
      <h2 id="create-webhook">Register an endpoint</h2>
      <label for="webhook-url">URL</label>
      <input
        id="webhook-url"
        type="url"
        required
        value=${url}
        onInput=${(e) => setUrl(e.currentTarget.value)}
      />
      <label for="webhook-description">Description</label>
      <input id="webhook-description" value=${description} onInput=${(e) => setDescription(e.currentTarget.value)} />
      <fieldset>
        <legend>Events</legend>
        <label class="check"
          ><input type="checkbox" checked=${all} onChange=${() => setAll(!all)} /> every event (*)</label
        >
        ${
          !all &&
          EVENTS.map(
            (ev) =>
              html`<label class="check"
                ><input type="checkbox" checked=${events.has(ev)} onChange=${() => toggle(ev)} /> ${ev}</label
              >`,
          )
        }
      </fieldset>
      <div><button type="submit">Register endpoint</button></div>
      <${ErrorNote} error=${error} />
    </form>
    ${
      created &&
      html`<div class="notice" role="status">
        <p><strong>Copy the signing secret for ${created.url} now: it is not shown again.</strong></p>
        <label for="new-secret">Signing secret</label>
        <input
          id="new-secret"
          class="secret"
          readonly
          value=${created.secret}
          onFocus=${(e) => e.currentTarget.select()}
        />
        <button type="button" onClick=${() => navigator.clipboard.writeText(created.secret)}>Copy</button>
        <button type="button" class="secondary" onClick=${() => setCreated(null)}>Done</button>
      </div>`
    }`;
}

/** One endpoint: its state (and why the service disabled it), enable or pause, delete, its deliveries. */
export function WebhookPage({ id, params, identity }) {
  const isAdmin = scopesOf(identity).has('admin');
  const status = params.get('status') ?? '';
  const [hookState, reloadHook] = useLoad(
    () => (isAdmin ? api('GET', `/webhooks/${id}`) : Promise.resolve(null)),
    [id, isAdmin],
  );
  const paging = usePaging([id, status]);
  const [deliveries, reloadDeliveries] = useLoad(
    () =>
      isAdmin
        ? api('GET', `/webhooks/${id}/deliveries`, { query: { status, limit: 50, cursor: paging.cursor } })
        : Promise.resolve(null),
    [id, status, paging.cursor, isAdmin],
  );
  const [error, setError] = useState(null);
  if (!isAdmin)
    return html`<h1>Webhook</h1>
      <p role="alert">Webhooks need an admin key.</p>`;
  const hook = hookState.data;
  if (!hook) return html`<h1>Webhook</h1><${Loading} state=${hookState} />`;
  const setEnabled = async (enabled) => {
    setError(null);
    try {
      await api('PATCH', `/webhooks/${id}`, { body: { enabled } });
      reloadHook();
      reloadDeliveries();
    } catch (e) {
      setError(e);
    }
  };
  const rows = deliveries.data?.deliveries ?? [];
  return html`<h1>Webhook</h1>
    <p><a href="#/webhooks">All endpoints</a></p>
    <dl class="facts">
      <div><dt>URL</dt><dd><code>${hook.url}</code></dd></div>
      <div><dt>Events</dt><dd>${hook.events.join(', ')}</dd></div>
      <div><dt>State</dt><dd><${State} hook=${hook} /></dd></div>
      <div><dt>Last success</dt><dd><${Time} at=${hook.last_success_at} /></dd></div>
      <div><dt>Created</dt><dd><${Time} at=${hook.created_at} /></dd></div>
    </dl>
    ${
      hook.disabled_reason &&
      html`<p class="error" role="alert" data-disabled-reason>
        Disabled <${Time} at=${hook.disabled_at} />: ${hook.disabled_reason}
      </p>`
    }
    <div class="actions">
      ${
        hook.enabled
          ? html`<button type="button" class="secondary" onClick=${() => setEnabled(false)}>Pause</button>`
          : html`<button type="button" onClick=${() => setEnabled(true)}>Enable</button>`
      }
      <${DeleteButton}
        label="Delete"
        confirmLabel="Delete this endpoint"
        onConfirm=${async () => {
          await api('DELETE', `/webhooks/${id}`);
          location.hash = '#/webhooks';
        }}
      />
    </div>
    <${ErrorNote} error=${error} />
    <h2>Deliveries</h2>
    <nav class="filters" aria-label="Delivery status">
      ${['', 'pending', 'delivered', 'failed'].map(
        (s) =>
          html`<a href=${`#/webhooks/${id}${s ? `?status=${s}` : ''}`} aria-current=${status === s ? 'page' : undefined}
            >${s || 'all'}</a
          >`,
      )}
    </nav>
    <${Loading} state=${deliveries} />
    ${deliveries.data && rows.length === 0 && html`<p class="muted">No delivery.</p>`}
    ${
      rows.length > 0 &&
      html`<table>
        <thead>
          <tr>
            <th scope="col">Event</th>
            <th scope="col">Kind</th>
            <th scope="col">Status</th>
            <th scope="col">Attempts</th>
            <th scope="col">Last attempt</th>
            <th scope="col">Answer</th>
            <th scope="col">Next attempt</th>
          </tr>
        </thead>
        <tbody>
          ${rows.map(
            (d) =>
              html`<tr key=${d.event_id} data-event-id=${d.event_id}>
                <th scope="row"><code title=${d.event_id}>${short(d.event_id)}</code></th>
                <td>${d.event_type}</td>
                <td>${d.status}</td>
                <td>${d.attempts}</td>
                <td><${Time} at=${d.last_attempt_at} /></td>
                <td>${d.last_error ?? (d.last_status_code ? `HTTP ${d.last_status_code}` : '—')}</td>
                <td><${Time} at=${d.next_attempt_at} /></td>
              </tr>`,
          )}
        </tbody>
      </table>`
    }
    <${Pager} paging=${paging} page=${deliveries.data} />`;
}
