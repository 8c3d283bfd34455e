import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { VERSION } from '../version.js';
import { hostOf, resolveDeliveryAddress, RefusedAddressError } from './address.js';
import { sign } from './signature.js';

/** The most of a receiver's answer that is read (and dropped): its status is what counts. */
const RESPONSE_MAX_BYTES = 64 * 1024;

export interface Attempt {
  ok: boolean;
  /** The receiver's HTTP status; null when none came (refused, timed out, unreachable). */
  statusCode: number | null;
  /** Why it failed, for the delivery's record and the console; never a secret or the payload. */
  error: string | null;
}

export interface Outbound {
  url: string;
  secret: string;
  /** The event's id (webhook-id): the same on every attempt and every endpoint. */
  id: string;
  body: string;
}

export interface SendOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  /** Seconds since the epoch for webhook-timestamp; signed per attempt, as receivers bound its age. */
  now: Date;
}

/**
 * One POST of a delivery. The address is resolved and checked before connecting, and the connection
 * goes to that address only; a redirect is not followed (3xx counts as a failure: a receiver that
 * moved must be updated, not chased), and the whole attempt is bounded by timeoutMs.
 */
export async function sendWebhook(out: Outbound, options: SendOptions): Promise<Attempt> {
  let url: URL;
  try {
    url = new URL(out.url);
  } catch {
    return { ok: false, statusCode: null, error: 'the endpoint URL is not valid' };
  }
  const signal = AbortSignal.timeout(options.timeoutMs);
  let pinned;
  try {
    pinned = await resolveDeliveryAddress(hostOf(url), options.allowPrivate);
  } catch (error) {
    const message = error instanceof RefusedAddressError ? error.message : `address lookup failed: ${describe(error)}`;
    return { ok: false, statusCode: null, error: message };
  }
  const timestamp = Math.floor(options.now.getTime() / 1000);
  const headers = {
    'content-type': 'application/json',
    'user-agent': `agent-memory/${VERSION}`,
    'webhook-id': out.id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': sign(out.secret, out.id, timestamp, out.body),
    'content-length': String(Buffer.byteLength(out.body)),
  };
  // Every name the connection looks up is the one checked above: the address is pinned.
  const lookup: LookupFunction = (_hostname, lookupOptions, callback) => {
    if (lookupOptions.all) callback(null, [{ address: pinned.address, family: pinned.family }]);
    else callback(null, pinned.address, pinned.family);
  };
  const transport = url.protocol === 'https:' ? https : http;
  return new Promise<Attempt>((resolve) => {
    let settled = false;
    const done = (attempt: Attempt) => {
      if (settled) return;
      settled = true;
      resolve(attempt);
    };
    const req = transport.request(url, { method: 'POST', headers, lookup, signal, agent: false }, (res) => {
      const status = res.statusCode ?? 0;
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        if (read > RESPONSE_MAX_BYTES) res.destroy();
      });
      const finish = () => {
        if (status >= 200 && status < 300) done({ ok: true, statusCode: status, error: null });
        else if (status >= 300 && status < 400) {
          done({ ok: false, statusCode: status, error: `HTTP ${status}: redirects are not followed` });
        } else done({ ok: false, statusCode: status, error: `HTTP ${status}` });
      };
      res.on('end', finish);
      res.on('close', finish);
      res.on('error', finish);
    });
    req.on('error', (error) => {
      const timedOut = signal.aborted;
      done({
        ok: false,
        statusCode: null,
        error: timedOut ? `no answer within ${options.timeoutMs} ms` : describe(error),
      });
    });
    req.end(out.body);
  });
}

function describe(error: unknown): string {
  const e = error as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : undefined;
  const message = typeof e.message === 'string' ? e.message : String(error);
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}
