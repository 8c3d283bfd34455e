import { createRequire } from 'node:module';
import path from 'node:path';
import type { Express, Request, Response } from 'express';
import { route, type AnyRoute } from './route.js';

/**
 * The rendered API reference at /docs: Swagger UI from the swagger-ui-dist package, served from
 * node_modules by this server, so that it works offline and loads nothing from another origin. The
 * page has no inline script: the CSP allows scripts, styles and fetches from this origin only.
 */

const UI_DIR = path.dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/package.json'));
export const DOCS_PATH = '/docs';
const ASSET_PATH = `${DOCS_PATH}/assets`;

/** The files the page loads, by the name it loads them under. */
const ASSETS: Record<string, string> = {
  'swagger-ui.css': 'swagger-ui.css',
  'swagger-ui-bundle.js': 'swagger-ui-bundle.js',
  'favicon-32x32.png': 'favicon-32x32.png',
};

// 'unsafe-inline' for styles only: Swagger UI sets style attributes as it renders; no script runs
// but the two files below, and the page can reach nothing but this origin.
export const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>agent-memory API reference</title>
    <link rel="icon" type="image/png" href="${ASSET_PATH}/favicon-32x32.png" />
    <link rel="stylesheet" href="${ASSET_PATH}/swagger-ui.css" />
  </head>
  <body>
    <div id="reference"></div>
    <script src="${ASSET_PATH}/swagger-ui-bundle.js"></script>
    <script src="${ASSET_PATH}/init.js"></script>
  </body>
</html>
`;

// validatorUrl null: Swagger UI would otherwise send the document to an outside validator.
const INIT = `window.addEventListener('load', function () {
  window.ui = SwaggerUIBundle({
    url: '/v1/openapi.json',
    dom_id: '#reference',
    deepLinking: true,
    validatorUrl: null,
    tryItOutEnabled: false,
  });
});
`;

const securityHeaders = (res: Response): void => {
  res.setHeader('Content-Security-Policy', DOCS_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
};

/** The page itself, in the route table so that the OpenAPI document lists it. */
export const docsRoute: AnyRoute = route({
  method: 'get',
  path: DOCS_PATH,
  operationId: 'getApiReference',
  summary: 'The API reference, rendered from /v1/openapi.json (HTML; its assets are served from /docs/assets)',
  tag: 'operations',
  access: 'public',
  responses: { 200: { description: 'An HTML page' } },
  handle: ({ res }) => {
    securityHeaders(res);
    res.type('html');
    return Promise.resolve({ status: 200, body: PAGE });
  },
});

/** The page's script and the package's files, served as they are, cached for a day. */
export function mountDocsAssets(app: Express): void {
  app.get(`${ASSET_PATH}/init.js`, (_req: Request, res: Response) => {
    res.locals.route = `${ASSET_PATH}/init.js`;
    securityHeaders(res);
    res.type('js').setHeader('Cache-Control', 'public, max-age=86400');
    res.send(INIT);
  });
  for (const [name, file] of Object.entries(ASSETS)) {
    app.get(`${ASSET_PATH}/${name}`, (_req: Request, res: Response, next) => {
      res.locals.route = `${ASSET_PATH}/${name}`;
      securityHeaders(res);
      res.sendFile(path.join(UI_DIR, file), { maxAge: '1d' }, (error) => {
        if (error) next(error);
      });
    });
  }
}
