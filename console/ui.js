import { html, useCallback, useEffect, useState } from './lib.js';

export { html };

/** Loads once per change of `deps`; `reload` runs it again. A late answer for old deps is dropped. */
export function useLoad(load, deps) {
  const [state, setState] = useState({ loading: true, data: null, error: null });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let current = true;
    setState((s) => ({ ...s, loading: true, error: null }));
    load().then(
      (data) => current && setState({ loading: false, data, error: null }),
      (error) => current && setState({ loading: false, data: null, error }),
    );
    return () => {
      current = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return [state, reload];
}

/** What the API said, in words; a 404 reads "not found" whatever the resource was. */
export function ErrorNote({ error }) {
  if (!error) return null;
  const text = error.status === 404 ? `Not found: ${error.message}` : error.message;
  return html`<p class="error" role="alert">${text}</p>`;
}

export const Loading = ({ state }) =>
  state.loading
    ? html`<p class="loading" aria-live="polite">Loading…</p>`
    : html`<${ErrorNote} error=${state.error} />`;

export function Time({ at }) {
  if (!at) return html`<span class="muted">—</span>`;
  const d = new Date(at);
  return html`<time datetime=${at} title=${at}>${d.toLocaleString()}</time>`;
}

/** "1 session", "2 sessions": a count with its noun. */
export const plural = (n, one, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

export const short = (id) => (id ? id.slice(0, 8) : '');
export const num = (n, digits = 2) => (typeof n === 'number' ? n.toFixed(digits) : '—');

/** Forward-only paging over next_cursor, with a way back to the first page. */
/** Next and first page of a list endpoint's answer `page`, moving `paging` (usePaging). */
export function Pager({ paging, page }) {
  const cursor = page?.next_cursor;
  const atFirst = !paging.cursor;
  if (!cursor && atFirst) return null;
  return html`<nav class="pager" aria-label="Pages">
    ${!atFirst && html`<button type="button" class="secondary" onClick=${paging.first}>First page</button>`}
    ${cursor && html`<button type="button" onClick=${() => paging.next(cursor)}>Next page</button>`}
  </nav>`;
}

/** Paging state for a list endpoint: the cursor of the page shown and how to move. */
export function usePaging(resetDeps) {
  const [cursor, setCursor] = useState(undefined);
  useEffect(() => setCursor(undefined), resetDeps);
  return { cursor, next: (c) => setCursor(c), first: () => setCursor(undefined) };
}

export function scopesOf(identity) {
  return new Set(identity?.scopes ?? []);
}
