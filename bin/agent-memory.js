#!/usr/bin/env node
// The compiled CLI; `npm ci` builds it through the prepare script.
import { existsSync } from 'node:fs';

const entry = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(entry)) {
  process.stderr.write('agent-memory: not built yet; run `npm run build` (npm ci does it for you)\n');
  process.exit(1);
}
await import(entry.href);
