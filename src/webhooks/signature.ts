import { createHmac, randomBytes } from 'node:crypto';

/** Standard Webhooks' secret form: `whsec_` and the base64 of the key's bytes. */
const PREFIX = 'whsec_';

/** A new endpoint secret: 32 random bytes, as the standard allows (24 to 64). */
export const newSecret = (): string => `${PREFIX}${randomBytes(32).toString('base64')}`;

/**
 * `v1,<base64 HMAC-SHA256>` of `<id>.<timestamp>.<body>` with the secret's bytes: what the Standard
 * Webhooks libraries verify (`webhook-signature`).
 */
export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}
