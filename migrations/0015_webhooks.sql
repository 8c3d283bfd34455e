-- Webhooks (docs/webhooks.md): endpoints a tenant registers, and the outbox of their deliveries.
--
-- An endpoint's secret signs its deliveries (Standard Webhooks, HMAC-SHA256), so the service must
-- read it back: it is kept as issued, never returned after creation and never logged.
CREATE TABLE webhook_endpoints (
  tenant_id       uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  id              uuid NOT NULL,
  url             text NOT NULL,
  -- Dotted event names (memory.created), or '*' for every one.
  events          text[] NOT NULL,
  description     text,
  enabled         boolean NOT NULL DEFAULT true,
  secret          text NOT NULL,
  created_at      timestamptz NOT NULL,
  updated_at      timestamptz NOT NULL,
  -- Why and when the service disabled the endpoint (its deliveries failed for too long); null
  -- while enabled, or when an admin disabled it.
  disabled_reason text,
  disabled_at     timestamptz,
  -- The first failed attempt since the last success: how long the endpoint has been failing.
  failing_since   timestamptz,
  last_success_at timestamptz,
  PRIMARY KEY (tenant_id, id)
);

-- The outbox: one row per event and endpoint, written in the transaction of the change the event
-- reports (src/domain/records/audit.ts), so that a committed change always has its deliveries and one
-- rolled back has none. id is the event's id (the audit event's), the same for every endpoint and
-- every attempt: receivers deduplicate by it (webhook-id).
CREATE TABLE webhook_deliveries (
  tenant_id        uuid NOT NULL REFERENCES tenants (id) ON DELETE CASCADE,
  endpoint_id      uuid NOT NULL,
  id               uuid NOT NULL,
  event_type       text NOT NULL,
  payload          jsonb NOT NULL,
  status           text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'failed')),
  attempts         integer NOT NULL DEFAULT 0,
  created_at       timestamptz NOT NULL,
  -- When a pending delivery is next tried; while an attempt runs, when it may be taken again
  -- should its process die (a lease).
  next_attempt_at  timestamptz NOT NULL,
  last_attempt_at  timestamptz,
  last_status_code integer,
  last_error       text,
  delivered_at     timestamptz,
  PRIMARY KEY (tenant_id, endpoint_id, id),
  FOREIGN KEY (tenant_id, endpoint_id) REFERENCES webhook_endpoints (tenant_id, id) ON DELETE CASCADE
);
-- The dispatcher's claim: due pending deliveries, across tenants.
CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
-- An endpoint's deliveries, newest first, for the console and the API.
CREATE INDEX webhook_deliveries_list_idx ON webhook_deliveries (tenant_id, endpoint_id, created_at, id);
-- Retention removes finished deliveries by age.
CREATE INDEX webhook_deliveries_finished_idx ON webhook_deliveries (created_at) WHERE status <> 'pending';
