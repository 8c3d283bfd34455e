import { api } from '../api.js';
import { html, Loading, Pager, short, Time, useLoad, usePaging } from '../ui.js';
import { useEffect, useState } from '../lib.js';

const STATES = ['queued', 'running', 'succeeded', 'failed'];
const KINDS = ['ingest', 'import', 'batch'];
/** While a job shown is queued or running, the page asks again this often. */
const REFRESH_MS = 2000;

/** A job's counts in words: its progress while it runs, what it did once it succeeded. */
function Progress({ job }) {
  const p = job.progress ?? {};
  if (job.kind === 'ingest' && p.messages !== undefined)
    return html`${p.messages_done ?? 0} of ${p.messages} messages · ${p.memories ?? 0} memories`;
  if (job.kind === 'batch' && p.items !== undefined) return html`${p.items_done ?? 0} of ${p.items} items`;
  if (job.kind === 'import' && p.bytes !== undefined) {
    const share = p.bytes > 0 ? Math.floor(((p.bytes_read ?? 0) / p.bytes) * 100) : 100;
    return html`${share}% of ${p.bytes.toLocaleString()} bytes`;
  }
  return html`<span class="muted">—</span>`;
}

function Outcome({ job }) {
  if (job.state === 'failed' && job.error)
    return html`<span class="error"><code>${job.error.code}</code> ${job.error.detail}</span>`;
  if (job.state !== 'succeeded' || !job.result) return null;
  const r = job.result;
  if (job.kind === 'ingest') return html`${r.memories.length} stored · ${r.skipped_messages} skipped`;
  if (job.kind === 'batch') {
    const failed = r.results.filter((x) => x.problem).length;
    return html`${r.results.length - failed} stored · ${failed} refused`;
  }
  return html`${r.lines} lines · ${r.imported.memories} memories · ${r.existing} existing`;
}

/** The tenant's jobs (requests sent with ?async=true), newest first, refreshed while any runs. */
export function JobsPage({ params }) {
  const filters = { state: params.get('state') ?? '', kind: params.get('kind') ?? '' };
  const [form, setForm] = useState(filters);
  const key = JSON.stringify(filters);
  const paging = usePaging([key]);
  const [state, reload] = useLoad(
    () =>
      api('GET', '/jobs', {
        query: { state: filters.state || undefined, kind: filters.kind || undefined, limit: 50, cursor: paging.cursor },
      }),
    [key, paging.cursor],
  );
  const jobs = state.data?.jobs ?? [];
  const active = jobs.some((j) => j.state === 'queued' || j.state === 'running');
  useEffect(() => {
    if (!active) return undefined;
    const timer = setTimeout(reload, REFRESH_MS);
    return () => clearTimeout(timer);
  }, [state.data, active]);
  const set = (name) => (e) => setForm({ ...form, [name]: e.currentTarget.value });
  const submit = (event) => {
    event.preventDefault();
    const query = new URLSearchParams(Object.entries(form).filter(([, v]) => v));
    location.hash = `#/jobs${query.size ? `?${query}` : ''}`;
  };
  return html`<h1>Jobs</h1>
    <p class="muted">
      Ingests and imports sent with <code>?async=true</code>, newest first. Finished jobs are kept for a week by
      default.${active ? ' Refreshing while some run.' : ''}
    </p>
    <form class="filters" onSubmit=${submit}>
      <label
        >State
        <select value=${form.state} onChange=${set('state')}>
          <option value="">any</option>
          ${STATES.map((s) => html`<option value=${s}>${s}</option>`)}
        </select>
      </label>
      <label
        >Kind
        <select value=${form.kind} onChange=${set('kind')}>
          <option value="">any</option>
          ${KINDS.map((k) => html`<option value=${k}>${k}</option>`)}
        </select>
      </label>
      <button type="submit">Filter</button>
    </form>
    ${!state.data && html`<${Loading} state=${state} />`}
    ${state.data && jobs.length === 0 && html`<p>No jobs.</p>`}
    ${
      jobs.length > 0 &&
      html`<table class="jobs">
        <thead>
          <tr>
            <th scope="col">Created</th>
            <th scope="col">Job</th>
            <th scope="col">Kind</th>
            <th scope="col">Agents</th>
            <th scope="col">State</th>
            <th scope="col">Progress</th>
            <th scope="col">Outcome</th>
            <th scope="col">Finished</th>
          </tr>
        </thead>
        <tbody>
          ${jobs.map(
            (j) =>
              html`<tr key=${j.id}>
                <td><${Time} at=${j.created_at} /></td>
                <td><code title=${j.id}>${short(j.id)}</code></td>
                <td>${j.kind}</td>
                <td>${j.agent_ids ? j.agent_ids.map((a) => html`<code>${a}</code> `) : html`<span class="muted">any</span>`}</td>
                <td>
                  <span class=${`state state-${j.state}`}>${j.state}</span>${
                    j.attempts > 1 && html` <span class="muted">(attempt ${j.attempts})</span>`
                  }
                </td>
                <td><${Progress} job=${j} /></td>
                <td><${Outcome} job=${j} /></td>
                <td>${j.finished_at && html`<${Time} at=${j.finished_at} />`}</td>
              </tr>`,
          )}
        </tbody>
      </table>`
    }
    <${Pager} paging=${paging} page=${state.data} />`;
}
