import { z } from 'zod';
import {
  ConversationMessageBody,
  CreateAnchorBody,
  CreateKeyBody,
  CreateSessionBody,
  IngestBody,
  SetupBody,
  StoreBatchBody,
  StoreMemoryBody,
  WriteCanonBody,
} from './inputs.js';
import {
  AnchorObject,
  AuditEventObject,
  CanonObject,
  CreatedKeyObject,
  FieldErrorObject,
  ImportResultObject,
  IngestResponse,
  KeyObject,
  MemoryObject,
  ProblemObject,
  RecallResponse,
  RecallResultObject,
  ScoreDetailsObject,
  SessionObject,
  SetupResponse,
  StoreBatchResponse,
  StoredMemoryObject,
  BatchItemResultObject,
} from './objects.js';
import { JobObject } from './jobs.js';
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
  [ImportResultObject, 'ImportResult'],
  [JobObject, 'Job'],
  [ProblemObject, 'Problem'],
  [FieldErrorObject, 'FieldError'],
  [StoreMemoryBody, 'StoreMemoryRequest'],
  [StoreBatchBody, 'StoreBatchRequest'],
  [StoreBatchResponse, 'StoreBatchResponse'],
  [BatchItemResultObject, 'BatchItemResult'],
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
