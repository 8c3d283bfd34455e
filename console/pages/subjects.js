import { api } from '../api.js';
import { html, Loading, Pager, Time, useLoad, usePaging } from '../ui.js';
import { useState } from '../lib.js';

/** Subjects by external id (a prefix), with their memory counts and last activity. */
export function SubjectsPage({ params }) {
  const q = params.get('q') ?? '';
  const [text, setText] = useState(q);
  const paging = usePaging([q]);
  const [state] = useLoad(
    () => api('GET', '/anchors', { query: { anchor_external_id_prefix: q, limit: 50, cursor: paging.cursor } }),
    [q, paging.cursor],
  );
  const search = (event) => {
    event.preventDefault();
    location.hash = `#/subjects${text.trim() ? `?q=${encodeURIComponent(text.trim())}` : ''}`;
  };
  const anchors = state.data?.anchors ?? [];
  return html`<h1>Subjects</h1>
    <form class="inline" role="search" onSubmit=${search}>
      <label for="subject-search">External id starts with</label>
      <input id="subject-search" type="search" value=${text} onInput=${(e) => setText(e.currentTarget.value)} />
      <button type="submit">Search</button>
    </form>
    <${Loading} state=${state} />
    ${
      state.data &&
      (anchors.length === 0
        ? html`<p>No subject${q ? html` whose external id starts with <code>${q}</code>` : ''}.</p>`
        : html`<table>
            <caption class="visually-hidden">
              Subjects
            </caption>
            <thead>
              <tr>
                <th scope="col">External id</th>
                <th scope="col">Name</th>
                <th scope="col" class="num">Memories</th>
                <th scope="col">Last activity</th>
                <th scope="col">Created</th>
              </tr>
            </thead>
            <tbody>
              ${anchors.map(
                (a) =>
                  html`<tr>
                    <th scope="row"><a href=${`#/subjects/${a.id}`}>${a.anchor_external_id}</a></th>
                    <td>${a.name ?? ''}</td>
                    <td class="num">${a.memory_count}</td>
                    <td><${Time} at=${a.last_activity_at} /></td>
                    <td><${Time} at=${a.created_at} /></td>
                  </tr>`,
              )}
            </tbody>
          </table>`)
    }
    <${Pager} paging=${paging} page=${state.data} />`;
}
