import { isIP } from 'node:net';
import type { Request } from 'express';

const MAPPED_IPV4 = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i;

/**
 * What per-address limits count as one client: an IPv4 address, or the /64 of an IPv6 address (the
 * block one subscriber is given, so rotating within it makes no new client). Anything else that a
 * trusted proxy forwards shares one bucket, so a long or forged value cannot make a counter of its own.
 */
export function addressUnit(ip: string): string {
  const mapped = MAPPED_IPV4.exec(ip);
  if (mapped?.[1] !== undefined) return mapped[1];
  const family = isIP(ip);
  if (family === 4) return ip;
  if (family !== 6) return 'unparsed';
  const [head = '', tail] = (ip.split('%')[0] ?? '').toLowerCase().split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const groups =
    tail === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return `${groups
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * The client's address as limits count it: the socket's peer, or behind a proxy trusted by
 * TRUST_PROXY the client that X-Forwarded-For names (express's `trust proxy`, set in app.ts).
 */
export const clientAddress = (req: Request): string => addressUnit(req.ip ?? req.socket.remoteAddress ?? '');
