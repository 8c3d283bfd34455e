#!/usr/bin/env node
// Builds dist/ from src/: the client's generated types, the TypeScript compile, then the files tsc
// does not copy. With
// --if-stale (what `npm start` runs), builds only when a source is newer than the last build, so
// a start after `npm ci` (whose prepare script builds) takes no compile.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const at = (...parts) => path.join(root, ...parts);
/** Written last, so that a build that failed or was interrupted is not taken for a finished one. */
const STAMP = at('dist', '.build-stamp');
/** What the build reads: every file under src/ and the TypeScript settings. */
const INPUTS = ['src', 'tsconfig.json', 'tsconfig.build.json'];
/**
 * Not compiled, needed at run time: each copied to the same place under dist/, which the package
 * ships whole (package.json "files"). Another built part (assets, say) is one more step in build().
 */
const COPIED = ['embedding/local-worker.js'];

function newestInput() {
  let newest = 0;
  const visit = (file) => {
    const stat = fs.statSync(file);
    if (stat.isDirectory()) for (const entry of fs.readdirSync(file)) visit(path.join(file, entry));
    else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const input of INPUTS) visit(at(input));
  return newest;
}

function stale() {
  // An installed package ships dist/ without src/: nothing to build from, nothing to build.
  if (!fs.existsSync(at('src'))) return false;
  if (!fs.existsSync(STAMP)) return true;
  return newestInput() > fs.statSync(STAMP).mtimeMs;
}

function build() {
  fs.rmSync(STAMP, { force: true });
  // The typed client's types are generated from the OpenAPI document first (src/client).
  const generated = spawnSync('npm', ['run', 'gen:client', '--silent'], { cwd: root, stdio: 'inherit' });
  if (generated.status !== 0) process.exit(generated.status ?? 1);
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const compiled = spawnSync(process.execPath, [tsc, '-p', at('tsconfig.build.json')], { stdio: 'inherit' });
  if (compiled.status !== 0) process.exit(compiled.status ?? 1);
  for (const file of COPIED) fs.copyFileSync(at('src', file), at('dist', file));
  fs.writeFileSync(STAMP, `${new Date().toISOString()}\n`);
}

if (!process.argv.includes('--if-stale') || stale()) build();
