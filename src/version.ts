import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

// src/ and dist/ both sit one level below the package root.
const pkgPath = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../package.json');

export const VERSION: string = (JSON.parse(fs.readFileSync(pkgPath, 'utf8')) as { version: string }).version;
