import { lookup as dnsLookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Where a webhook may not be sent unless WEBHOOK_ALLOW_PRIVATE=true: an endpoint URL is chosen by a
 * tenant's admin, and without this the service would post to its own network (the database, a cloud
 * metadata service at 169.254.169.254, an admin port on loopback) on their behalf.
 */
const PRIVATE = new BlockList();
for (const [net, bits] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local, cloud metadata
  ['172.16.0.0', 12],
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv4');
}
for (const [net, bits] of [
  ['::', 128], // unspecified
  ['::1', 128],
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated, still routed by some)
  ['ff00::', 8], // multicast
] as const) {
  PRIVATE.addSubnet(net, bits, 'ipv6');
}

/**
 * The IPv4 address an IPv6 one carries, for the forms that reach it: IPv4-mapped (::ffff:a.b.c.d),
 * IPv4-compatible (::a.b.c.d) and NAT64 (64:ff9b::a.b.c.d). Undefined for any other.
 */
export function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const groups = expandIpv6(lower);
  if (!groups) return undefined;
  const mapped = groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff;
  const compatible = groups.slice(0, 6).every((g) => g === 0) && (groups[6] !== 0 || (groups[7] ?? 0) > 1);
  const nat64 = groups[0] === 0x64 && groups[1] === 0xff9b && groups.slice(2, 6).every((g) => g === 0);
  if (!mapped && !compatible && !nat64) return undefined;
  const hi = groups[6] ?? 0;
  const lo = groups[7] ?? 0;
  return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
}

/** The eight 16-bit groups of an IPv6 address (with an embedded dotted quad or not). */
function expandIpv6(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.replace(/%.*$/, '');
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  const zeros = tail === undefined ? [] : Array<number>(8 - left.length - right.length).fill(0);
  const groups = [...left, ...zeros, ...right];
  return groups.length === 8 ? groups : undefined;
}

/** True for an address of the private, loopback, link-local and other non-public ranges above. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return PRIVATE.check(address, 'ipv4');
  if (family !== 6) return true;
  const v4 = embeddedIpv4(address);
  if (v4 !== undefined) return PRIVATE.check(v4, 'ipv4');
  return PRIVATE.check(address.replace(/%.*$/, ''), 'ipv6');
}

/** A URL's host as an address or a name: without the brackets of an IPv6 literal. */
export const hostOf = (url: URL): string => url.hostname.replace(/^\[(.*)\]$/, '$1');

export class RefusedAddressError extends Error {}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * The address to connect to for `host`: a literal as it is, a name resolved (every address it has).
 * Without `allowPrivate`, a private address is refused, and a name is connected to by one of its
 * public addresses only; the caller connects to exactly the address returned (pinned), so a name
 * that resolves differently a moment later (DNS rebinding) cannot redirect the connection.
 */
export async function resolveDeliveryAddress(host: string, allowPrivate: boolean): Promise<ResolvedAddress> {
  const literal = isIP(host);
  if (literal !== 0) {
    if (!allowPrivate && isPrivateAddress(host)) {
      throw new RefusedAddressError(`${host} is a private, loopback or link-local address`);
    }
    return { address: host, family: literal as 4 | 6 };
  }
  const lower = host.toLowerCase().replace(/\.$/, '');
  if (!allowPrivate && (lower === 'localhost' || lower.endsWith('.localhost'))) {
    throw new RefusedAddressError(`${host} is a loopback name`);
  }
  const all = await dnsLookup(host, { all: true, verbatim: true });
  const usable = allowPrivate ? all : all.filter((a) => !isPrivateAddress(a.address));
  const chosen = usable[0];
  if (!chosen) {
    throw new RefusedAddressError(
      all.length === 0
        ? `${host} has no address`
        : `${host} resolves only to private, loopback or link-local addresses (${all.map((a) => a.address).join(', ')})`,
    );
  }
  return { address: chosen.address, family: chosen.family as 4 | 6 };
}
