import { describe, expect, it } from 'vitest';
import { embeddedIpv4, isPrivateAddress, resolveDeliveryAddress } from '../../src/webhooks/address.js';
import { retryDelayMs } from '../../src/webhooks/dispatcher.js';
import { sign } from '../../src/webhooks/signature.js';
import { Webhook } from 'standardwebhooks';

describe('webhook address checks', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.255.0.9', true],
    ['10.0.0.1', true],
    ['172.16.5.4', true],
    ['172.32.0.1', false],
    ['192.168.1.1', true],
    ['169.254.169.254', true],
    ['100.64.0.1', true],
    ['0.0.0.0', true],
    ['224.0.0.1', true],
    ['255.255.255.255', true],
    ['8.8.8.8', false],
    ['93.184.216.34', false],
    ['::1', true],
    ['::', true],
    ['fe80::1', true],
    ['fe80::1%eth0', true],
    ['fd12:3456::1', true],
    ['ff02::1', true],
    ['::ffff:127.0.0.1', true],
    ['::ffff:7f00:1', true],
    ['::ffff:a9fe:a9fe', true],
    ['::ffff:8.8.8.8', false],
    ['64:ff9b::10.0.0.1', true],
    ['64:ff9b::808:808', false],
    ['::127.0.0.1', true],
    ['2001:4860:4860::8888', false],
    ['not an address', true],
  ])('%s private: %s', (address, expected) => {
    expect(isPrivateAddress(address)).toBe(expected);
  });

  it('reads the IPv4 address inside mapped, compatible and NAT64 forms only', () => {
    expect(embeddedIpv4('::ffff:192.168.0.1')).toBe('192.168.0.1');
    expect(embeddedIpv4('::ffff:c0a8:1')).toBe('192.168.0.1');
    expect(embeddedIpv4('64:ff9b::c0a8:1')).toBe('192.168.0.1');
    expect(embeddedIpv4('2001:db8::c0a8:1')).toBeUndefined();
    expect(embeddedIpv4('::1')).toBeUndefined();
  });

  it('refuses loopback names and private literals unless allowed, and pins a literal as it is', async () => {
    await expect(resolveDeliveryAddress('localhost', false)).rejects.toThrow(/loopback name/);
    await expect(resolveDeliveryAddress('api.localhost', false)).rejects.toThrow(/loopback name/);
    await expect(resolveDeliveryAddress('127.0.0.1', false)).rejects.toThrow(/private/);
    expect(await resolveDeliveryAddress('127.0.0.1', true)).toEqual({ address: '127.0.0.1', family: 4 });
    expect(await resolveDeliveryAddress('8.8.8.8', false)).toEqual({ address: '8.8.8.8', family: 4 });
    const local = await resolveDeliveryAddress('localhost', true);
    expect(isPrivateAddress(local.address)).toBe(true);
  });
});

describe('webhook signatures and schedule', () => {
  it('signs as the Standard Webhooks library does', () => {
    const secret = `whsec_${Buffer.alloc(32, 3).toString('base64')}`;
    const at = new Date('2026-03-01T10:00:00Z');
    const body = '{"type":"memory.created"}';
    expect(sign(secret, 'msg_1', at.getTime() / 1000, body)).toBe(new Webhook(secret).sign('msg_1', at, body));
  });

  it('waits each step of the schedule within ±10 %, and stops after the last', () => {
    const schedule = [5000, 300_000];
    expect(retryDelayMs(schedule, 1, () => 0)).toBe(4500);
    expect(retryDelayMs(schedule, 1, () => 1)).toBe(5500);
    expect(retryDelayMs(schedule, 2, () => 0.5)).toBe(300_000);
    expect(retryDelayMs(schedule, 3)).toBeUndefined();
  });
});
