import { z } from 'zod';
import { cursor, limit, text } from './fields.js';
import { WEBHOOK_EVENTS } from '../vocabulary.js';

/** Webhook endpoints and their deliveries (docs/webhooks.md): request bodies and response objects. */

const time = z.string().describe('ISO-8601, UTC');

const webhookUrl = text()
  .max(2000)
  .pipe(z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }))
  .describe(
    'Where deliveries are POSTed. A private, loopback or link-local address (or a name resolving only to such) is refused unless the server sets WEBHOOK_ALLOW_PRIVATE=true',
  );

const events = z
  .array(z.enum([...WEBHOOK_EVENTS, '*'], { error: `must be one of ${WEBHOOK_EVENTS.join(', ')}, or *` }))
  .min(1, 'must name at least one event kind, or ["*"] for all')
  .max(WEBHOOK_EVENTS.length + 1)
  .describe('The event kinds wanted, dotted (memory.created, subject.purged); ["*"] for all');

const description = text().trim().max(500).nullable().describe('A note for the console');

export const CreateWebhookBody = z.strictObject({
  url: webhookUrl,
  events,
  description: description.optional(),
  // Optional rather than defaulted: a default makes the field required in the generated client's types.
  enabled: z.boolean().optional().describe('false registers it paused; true when left out'),
});

export const UpdateWebhookBody = z
  .strictObject({
    url: webhookUrl.optional(),
    events: events.optional(),
    description: description.optional(),
    enabled: z
      .boolean()
      .optional()
      .describe('true enables the endpoint again (a disabled one resumes its pending deliveries); false pauses it'),
  })
  .refine((b) => Object.values(b).some((v) => v !== undefined), {
    message: 'must change at least one of url, events, description, enabled',
  });

export const DeliveriesQuery = z.strictObject({
  status: z.enum(['pending', 'delivered', 'failed']).optional(),
  limit: limit(50, 200),
  cursor: cursor.optional(),
});

export const WebhookObject = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  description: z.string().nullable(),
  enabled: z.boolean(),
  created_at: time,
  updated_at: time,
  disabled_reason: z
    .string()
    .nullable()
    .describe('Why the service disabled the endpoint (its deliveries failed for too long); null otherwise'),
  disabled_at: time.nullable(),
  failing_since: time.nullable().describe('The first failed attempt since the last success; null when healthy'),
  last_success_at: time.nullable(),
});

export const CreatedWebhookObject = WebhookObject.extend({
  secret: z
    .string()
    .describe('whsec_ and base64: verifies the webhook-signature of deliveries. Shown once, never returned again'),
});

export const WebhookDeliveryObject = z.object({
  event_id: z.string().describe('The event id, sent as webhook-id: the same on every attempt'),
  event_type: z.string(),
  status: z.enum(['pending', 'delivered', 'failed']),
  attempts: z.number().int(),
  created_at: time,
  next_attempt_at: time.nullable(),
  last_attempt_at: time.nullable(),
  last_status_code: z.number().int().nullable(),
  last_error: z.string().nullable(),
  delivered_at: time.nullable(),
});
