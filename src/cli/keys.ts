import { parseArgs } from 'node:util';
import type { Config } from '../config.js';
import { type Actor, type Core } from '../domain/core.js';
import { createKey, type ApiKeyView } from '../domain/tenancy/keys.js';
import { ensureLocalTenant } from '../domain/tenancy/local-tenant.js';
import { findTenant, type TenantRef } from '../domain/tenancy/tenants.js';
import { AppError } from '../errors.js';
import type { Running } from '../start-core.js';
import { UsageError } from './failure.js';
import { SCOPES, type Scope } from '../vocabulary.js';

export type TenantChoice = { local: true } | { id: string } | { orgName: string };

export interface CreatedKey {
  tenant: TenantRef;
  key: ApiKeyView;
  apiKey: string;
}

/**
 * A key for any tenant, made by whoever can open the database: the only way to reach the local
 * tenant over REST, whose org name `setup` cannot take and which has no key of its own. Recorded in
 * the tenant's audit as `key_created` with no key behind it, as setup's first key is.
 */
export async function createKeyFor(
  core: Core,
  choice: TenantChoice,
  name: string,
  scopes: readonly Scope[],
): Promise<CreatedKey> {
  let tenant: TenantRef | null;
  if ('local' in choice) tenant = await findTenant(core, { id: await ensureLocalTenant(core) });
  else if ('id' in choice) tenant = await findTenant(core, choice);
  else tenant = await findTenant(core, choice);
  if (!tenant) {
    const which = 'id' in choice ? `id ${choice.id}` : `org name "${(choice as { orgName: string }).orgName}"`;
    throw new AppError('not_found', `no tenant with ${which}; \`agent-memory setup --org NAME\` creates one`);
  }
  const actor: Actor = { tenantId: tenant.tenantId, keyId: null, scopes: new Set(SCOPES) };
  const created = await createKey(core, actor, name, scopes);
  return { tenant, key: created.view, apiKey: created.apiKey };
}

function parseScopes(list: string): Scope[] {
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  const unknown = names.filter((s) => !(SCOPES as readonly string[]).includes(s));
  if (names.length === 0 || unknown.length > 0) {
    throw new UsageError(`--scopes takes a comma-separated list of ${SCOPES.join(', ')}; got "${list}"`);
  }
  return names as Scope[];
}

/** Reads `keys create`'s options; a usage error for anything else. */
export function parseKeysCreate(args: string[]): { choice: TenantChoice; name: string; scopes: Scope[] } {
  const [sub, ...rest] = args;
  if (sub !== 'create') throw new UsageError(sub ? `unknown keys command "${sub}"` : 'keys needs a command: create');
  let values;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: {
        local: { type: 'boolean' },
        tenant: { type: 'string' },
        org: { type: 'string' },
        name: { type: 'string' },
        scopes: { type: 'string' },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const chosen = [values.local ? 'local' : '', values.tenant ? 'tenant' : '', values.org ? 'org' : ''].filter(Boolean);
  if (chosen.length > 1)
    throw new UsageError(`keys create takes one of --local, --tenant, --org; got ${chosen.join(', ')}`);
  const tenant = values.tenant?.trim();
  const org = values.org?.trim();
  const choice: TenantChoice = tenant ? { id: tenant } : org ? { orgName: org } : { local: true };
  const name = values.name?.trim() || 'cli';
  return { choice, name, scopes: parseScopes(values.scopes ?? 'read,write') };
}

/** `agent-memory keys create …`: prints the tenant and the key on stdout, once. */
export async function keys(config: Config, args: string[], start: (config: Config) => Promise<Running>): Promise<void> {
  const { choice, name, scopes } = parseKeysCreate(args);
  const running = await start(config);
  try {
    const { tenant, key, apiKey } = await createKeyFor(running.core, choice, name, scopes);
    process.stdout.write(
      `tenant_id: ${tenant.tenantId}\norg_name:  ${tenant.orgName}\nkey_id:    ${key.id}\n` +
        `scopes:    ${key.scopes.join(',')}\napi_key:   ${apiKey}\n`,
    );
    process.stderr.write(
      'Store the key now: it is shown only once. Use it as `Authorization: Bearer <key>` against ' +
        '`agent-memory serve` on the same database.\n',
    );
  } finally {
    await running.close();
  }
}
