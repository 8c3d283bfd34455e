import { existsSync } from 'node:fs';
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

/** Preact and htm in one ES module with no imports of its own, so the browser needs no import map. */
function vendorFile(): string {
  // htm's main entry is dist/htm.js; the bundle sits beside dist/, outside its export map.
  const main = createRequire(import.meta.url).resolve('htm');
  return path.join(path.dirname(main), '..', 'preact', 'standalone.module.js');
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
  const vendor = vendorFile();
  // Both ship in the package; without them (a trimmed install) there is no console, and the API is unchanged.
  if (!existsSync(path.join(UI_DIR, 'index.html')) || !existsSync(vendor)) return;
  app.use(CONSOLE_PATH, securityHeaders);
  app.get(`${CONSOLE_PATH}/vendor/preact-htm.js`, (_req: Request, res: Response) => {
    res.locals.route = `${CONSOLE_PATH}/vendor`;
    res.type('text/javascript').sendFile(vendor);
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
