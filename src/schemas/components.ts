import { z } from 'zod';
import {
  ConversationMessageBody,
  CreateAnchorBody,
  CreateKeyBody,
  CreateSessionBody,
  IngestBody,
  SetupBody,
  StoreMemoryBody,
  WriteCanonBody,
} from './inputs.js';
import {
  AnchorObject,
  AuditEventObject,
  CanonObject,
  CreatedKeyObject,
  FieldErrorObject,
  IngestResponse,
  KeyObject,
  MemoryObject,
  ProblemObject,
  RecallResponse,
  RecallResultObject,
  ScoreDetailsObject,
  SessionObject,
  SetupResponse,
  StoredMemoryObject,
} from './objects.js';
import {
  CreatedWebhookObject,
  CreateWebhookBody,
  UpdateWebhookBody,
  WebhookDeliveryObject,
  WebhookObject,
} from './webhooks.js';

/**
 * The named schemas of the OpenAPI document (components.schemas): wherever one of these appears in
 * a route's body or answer, the document refers to it by name instead of repeating it. A request
 * schema and an answer schema never share a name, since zod renders them for input and output.
 */
export const COMPONENTS = z.registry<{ id: string }>();

const named: [z.ZodType, string][] = [
  [MemoryObject, 'Memory'],
  [StoredMemoryObject, 'StoredMemory'],
  [RecallResultObject, 'RecallResult'],
  [RecallResponse, 'RecallResponse'],
  [ScoreDetailsObject, 'ScoreDetails'],
  [IngestResponse, 'IngestResponse'],
  [AnchorObject, 'Anchor'],
  [SessionObject, 'Session'],
  [CanonObject, 'CanonEntry'],
  [AuditEventObject, 'AuditEvent'],
  [KeyObject, 'ApiKey'],
  [CreatedKeyObject, 'CreatedApiKey'],
  [SetupResponse, 'SetupResponse'],
  [ProblemObject, 'Problem'],
  [FieldErrorObject, 'FieldError'],
  [StoreMemoryBody, 'StoreMemoryRequest'],
  [IngestBody, 'IngestRequest'],
  [ConversationMessageBody, 'ConversationMessage'],
  [CreateAnchorBody, 'CreateAnchorRequest'],
  [CreateSessionBody, 'StartSessionRequest'],
  [WriteCanonBody, 'WriteCanonRequest'],
  [CreateKeyBody, 'CreateKeyRequest'],
  [SetupBody, 'SetupRequest'],
  [WebhookObject, 'Webhook'],
  [CreatedWebhookObject, 'CreatedWebhook'],
  [WebhookDeliveryObject, 'WebhookDelivery'],
  [CreateWebhookBody, 'CreateWebhookRequest'],
  [UpdateWebhookBody, 'UpdateWebhookRequest'],
];
for (const [schema, id] of named) COMPONENTS.add(schema, { id });
