/**
 * Writes the server's OpenAPI document (what GET /v1/openapi.json serves) to the file named by its
 * argument, without a database: the typed client's types are generated from it at build time
 * (`npm run gen:client`), so they follow the routes as they are.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { API_ROUTES } from '../src/app.js';
import { docsRoute } from '../src/http/docs.js';
import { buildOpenApi } from '../src/http/openapi.js';
import { createMetrics } from '../src/http/metrics.js';
import { opsRoutes } from '../src/http/routes/ops.js';
import { VERSION } from '../src/version.js';

const out = process.argv[2];
if (!out) throw new Error('usage: tsx tools/openapi-document.ts OUT.json');
// The routes app.ts serves, with /metrics as a server without METRICS_TOKEN or METRICS_PORT has it.
const metricsConfig = { token: undefined, port: undefined };
const document = buildOpenApi(
  [...opsRoutes(createMetrics(undefined), metricsConfig, () => document), docsRoute, ...API_ROUTES],
  VERSION,
);
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(out, `${JSON.stringify(document, null, 2)}\n`);
