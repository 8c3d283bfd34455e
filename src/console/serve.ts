import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';

/**
 * The console (docs/console.md): static files that talk to /v1 with the key the user enters, served
 * by the same process. Nothing is rendered on the server and nothing here reads a key: the pages
 * hold no data until the browser asks /v1 for it, with the same scopes as any other client.
 */

export const CONSOLE_PATH = '/console';

/** src/console and dist/console are both two levels below the package root, which holds console/. */
const UI_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../console');

const require = createRequire(import.meta.url);

/**
 * Preact, its hooks and htm as the browser loads them: ES modules from their npm packages, read
 * once at start. The hooks module imports the bare name "preact", which a browser resolves only
 * through an import map, an inline script that the Content-Security-Policy refuses; it is pointed
 * at the sibling file instead.
 */
function vendorModules(): Map<string, string> | undefined {
  const preactDir = path.dirname(require.resolve('preact/package.json'));
  const htmMain = require.resolve('htm');
  const files = {
    'preact.js': path.join(preactDir, 'dist/preact.module.js'),
    'hooks.js': path.join(preactDir, 'hooks/dist/hooks.module.js'),
    'htm.js': path.join(path.dirname(htmMain), 'htm.module.js'),
  };
  if (!Object.values(files).every((f) => existsSync(f))) return undefined;
  const modules = new Map(Object.entries(files).map(([name, file]) => [name, readFileSync(file, 'utf8')]));
  const hooks = (modules.get('hooks.js') ?? '').replace(/from\s*(["'])preact\1/g, 'from"./preact.js"');
  modules.set('hooks.js', hooks);
  return modules;
}

/**
 * No inline script or style, no other origin, no framing: a page that shows what agents remember
 * must not run or load anything it did not ship with, so an injected memory can never become code.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

function securityHeaders(_req: Request, res: Response, next: NextFunction): void {
  res.setHeader('Content-Security-Policy', CONSOLE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cache-Control', 'no-cache');
  next();
}

export function mountConsole(app: Express): void {
  // Both ship with the package; without them (a trimmed install) there is no console, and the API is unchanged.
  const vendor = existsSync(path.join(UI_DIR, 'index.html')) ? vendorModules() : undefined;
  if (!vendor) return;
  app.use(CONSOLE_PATH, securityHeaders);
  app.get(`${CONSOLE_PATH}/vendor/:file`, (req: Request, res: Response, next: NextFunction) => {
    const body = vendor.get(String(req.params.file));
    if (body === undefined) {
      next();
      return;
    }
    res.locals.route = `${CONSOLE_PATH}/vendor`;
    res.type('text/javascript').send(body);
  });
  app.use(
    CONSOLE_PATH,
    (_req: Request, res: Response, next: NextFunction) => {
      res.locals.route = CONSOLE_PATH;
      next();
    },
    express.static(UI_DIR, { index: 'index.html', redirect: true, dotfiles: 'ignore', fallthrough: true }),
  );
}
