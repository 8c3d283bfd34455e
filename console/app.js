import { html, render, useEffect, useState } from './lib.js';
import { api, keyStore, setUnauthorizedHandler } from './api.js';
import { AuditPage } from './pages/audit.js';
import { CanonPage } from './pages/canon.js';
import { JobsPage } from './pages/jobs.js';
import { KeysPage } from './pages/keys.js';
import { MemoryPage } from './pages/memory.js';
import { SessionPage } from './pages/session.js';
import { SubjectPage } from './pages/subject.js';
import { SubjectsPage } from './pages/subjects.js';
import { WebhookPage, WebhooksPage } from './pages/webhooks.js';
import { ErrorNote, scopesOf } from './ui.js';

/** Hash routes, so that every page has a URL and the server serves one file. */
function parseRoute() {
  const [path, search] = location.hash.replace(/^#/, '').split('?');
  const parts = (path || '/subjects').split('/').filter(Boolean);
  return { parts, params: new URLSearchParams(search ?? '') };
}

function useRoute() {
  const [route, setRoute] = useState(parseRoute);
  useEffect(() => {
    const onChange = () => setRoute(parseRoute());
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return route;
}

function Login({ onSignedIn, reason }) {
  const [key, setKey] = useState('');
  const [error, setError] = useState(reason ?? null);
  const [busy, setBusy] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const identity = await api('GET', '/keys/current', { key: key.trim() });
      keyStore.set(key.trim());
      onSignedIn(identity);
    } catch (e) {
      setError(e);
    } finally {
      setBusy(false);
    }
  };
  return html`<main id="main" class="login">
    <h1>agent-memory console</h1>
    <p>
      See, correct and erase what your agents remember. Sign in with an API key of your tenant; it is kept for this
      browser tab only.
    </p>
    <form onSubmit=${submit}>
      <label for="api-key">API key</label>
      <input
        id="api-key"
        name="api-key"
        type="password"
        autocomplete="off"
        required
        value=${key}
        onInput=${(e) => setKey(e.currentTarget.value)}
        placeholder="mk_… or rk_…"
      />
      <button type="submit" disabled=${busy}>Sign in</button>
    </form>
    <${ErrorNote} error=${error} />
  </main>`;
}

function Nav({ identity, route, onSignOut }) {
  const can = scopesOf(identity);
  const items = [
    can.has('read') && ['subjects', 'Subjects'],
    ['canon', 'Canon'],
    can.has('read') && ['jobs', 'Jobs'],
    can.has('admin') && ['audit', 'Audit'],
    can.has('admin') && ['keys', 'Keys'],
    can.has('admin') && ['webhooks', 'Webhooks'],
  ].filter(Boolean);
  const here = route.parts[0];
  return html`<header class="top">
    <a class="skip" href="#main" onClick=${(e) => (e.preventDefault(), document.getElementById('main')?.focus())}
      >Skip to content</a
    >
    <span class="brand">agent-memory</span>
    <nav aria-label="Console">
      <ul>
        ${items.map(
          ([id, label]) =>
            html`<li>
              <a
                href=${`#/${id}`}
                aria-current=${here === id || (id === 'subjects' && (here === 'memories' || here === 'sessions')) ? 'page' : undefined}
                >${label}</a
              >
            </li>`,
        )}
      </ul>
    </nav>
    <span class="who" aria-label="Signed in key"
      >${identity.name} · <code>${identity.key_prefix}</code> · ${identity.scopes.join(', ')}</span
    >
    <button type="button" class="secondary" onClick=${onSignOut}>Sign out</button>
  </header>`;
}

function Page({ route, identity }) {
  const [first, id] = route.parts;
  switch (first) {
    case 'subjects':
      return id
        ? html`<${SubjectPage} id=${id} identity=${identity} />`
        : html`<${SubjectsPage} params=${route.params} />`;
    case 'memories':
      return html`<${MemoryPage} id=${id} identity=${identity} />`;
    case 'sessions':
      return html`<${SessionPage} id=${id} identity=${identity} />`;
    case 'canon':
      return html`<${CanonPage} identity=${identity} />`;
    case 'jobs':
      return html`<${JobsPage} params=${route.params} />`;
    case 'keys':
      return html`<${KeysPage} identity=${identity} />`;
    case 'webhooks':
      return id
        ? html`<${WebhookPage} id=${id} params=${route.params} identity=${identity} />`
        : html`<${WebhooksPage} identity=${identity} />`;
    case 'audit':
      return html`<${AuditPage} params=${route.params} identity=${identity} />`;
    default:
      return html`<p role="alert">Not found: no page ${first}.</p>`;
  }
}

function App() {
  const route = useRoute();
  const [identity, setIdentity] = useState(null);
  const [checking, setChecking] = useState(keyStore.get() !== null);
  const [reason, setReason] = useState(null);
  useEffect(() => {
    setUnauthorizedHandler((error) => {
      keyStore.clear();
      setIdentity(null);
      setReason(error);
    });
    if (keyStore.get() === null) return;
    api('GET', '/keys/current')
      .then(setIdentity, () => {})
      .finally(() => setChecking(false));
  }, []);
  useEffect(() => {
    const title = route.parts[0] ?? 'subjects';
    document.title = `${title[0].toUpperCase()}${title.slice(1)} · agent-memory console`;
    // A new page starts at its top, and a screen reader or keyboard user starts there too.
    scrollTo(0, 0);
    document.getElementById('main')?.focus({ preventScroll: true });
  }, [route]);
  if (checking) return html`<p class="loading">Loading…</p>`;
  if (!identity) return html`<${Login} reason=${reason} onSignedIn=${(i) => (setReason(null), setIdentity(i))} />`;
  const signOut = () => {
    keyStore.clear();
    setIdentity(null);
  };
  return html`<${Nav} identity=${identity} route=${route} onSignOut=${signOut} />
    <main id="main" tabindex="-1"><${Page} route=${route} identity=${identity} /></main>`;
}

const root = document.getElementById('root');
// The placeholder is static HTML, not Preact's: it would stay below the app if left in place.
root.replaceChildren();
render(html`<${App} />`, root);
