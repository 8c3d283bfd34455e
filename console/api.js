/**
 * The console's only door to the service: the public /v1 API, with the key the user typed. The key
 * lives in sessionStorage, so it belongs to this tab and dies with it; it is never put in a cookie,
 * a URL or localStorage.
 */
const KEY = 'agent-memory.console.key';

export const keyStore = {
  get: () => sessionStorage.getItem(KEY),
  set: (key) => sessionStorage.setItem(KEY, key),
  clear: () => sessionStorage.removeItem(KEY),
};

/** A problem document (RFC 9457) from the API, or a network failure. */
export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.detail ?? (status === 0 ? 'the service did not answer' : `HTTP ${status}`));
    this.status = status;
    this.code = problem?.code ?? null;
    this.errors = problem?.errors ?? [];
  }
}

let onUnauthorized = () => {};
/** Called when the key stops working (revoked, or the tab's key is wrong): the app signs out. */
export const setUnauthorizedHandler = (handler) => {
  onUnauthorized = handler;
};

export async function api(method, path, { query, body, key } = {}) {
  const url = new URL(`/v1${path}`, location.origin);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null && value !== '') url.searchParams.set(name, String(value));
  }
  const headers = { Authorization: `Bearer ${key ?? keyStore.get() ?? ''}` };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  let res;
  try {
    res = await fetch(url, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
  } catch {
    throw new ApiError(0, null);
  }
  if (res.status === 204) return null;
  const data = await res.json().catch(() => null);
  if (!res.ok) {
    const error = new ApiError(res.status, data);
    if (res.status === 401 && key === undefined) onUnauthorized(error);
    throw error;
  }
  return data;
}
