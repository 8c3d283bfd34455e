import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/cli.js';

/**
 * Issue 15 point 9: the image and the compose file, checked as text (the machines that run the
 * tests have no container runtime): a pinned base image, and a compose file whose service waits
 * for a healthy pgvector database, keeps its data in a volume and checks its own readiness.
 */
const read = (file: string): string => readFileSync(join(ROOT, file), 'utf8');

describe('the Dockerfile', () => {
  it('builds and runs on one base image pinned by exact version and digest', () => {
    const dockerfile = read('Dockerfile');
    const image = /^ARG NODE_IMAGE=(\S+)$/m.exec(dockerfile)?.[1];
    expect(image).toMatch(/^node:\d+\.\d+\.\d+-[a-z]+-slim@sha256:[0-9a-f]{64}$/);
    const froms = [...dockerfile.matchAll(/^FROM (\S+)/gm)].map((m) => m[1]);
    expect(froms).toEqual(['${NODE_IMAGE}', '${NODE_IMAGE}']);
    // The runtime's Node satisfies the engines of package.json.
    const engines = (JSON.parse(read('package.json')) as { engines: { node: string } }).engines.node;
    const [major, minor] = /node:(\d+)\.(\d+)/.exec(image!)!.slice(1).map(Number);
    const [needMajor, needMinor] = /(\d+)\.(\d+)/.exec(engines)!.slice(1).map(Number);
    expect(major! > needMajor! || (major === needMajor && minor! >= needMinor!)).toBe(true);
  });
});

describe('compose.yaml', () => {
  const compose = read('compose.yaml');
  /** The lines of one top-level service, up to the next service or section. */
  const service = (name: string): string => {
    const start = compose.indexOf(`\n  ${name}:\n`);
    expect(start, name).toBeGreaterThan(0);
    const rest = compose.slice(start + 1);
    const end = rest.slice(1).search(/\n {2}\S|\n\S/);
    return end < 0 ? rest : rest.slice(0, end + 1);
  };

  it('runs the service against pgvector/pgvector:pg17 once the database is healthy', () => {
    const db = service('db');
    expect(db).toMatch(/image: pgvector\/pgvector:pg17\n/);
    expect(db).toMatch(/healthcheck:\n\s+test: .*pg_isready/);
    expect(db).toMatch(/volumes:\n\s+- db-data:\/var\/lib\/postgresql\/data/);
    expect(db).not.toMatch(/ports:/);
    const app = service('agent-memory');
    expect(app).toMatch(/build: \.\n/);
    expect(app).toMatch(/depends_on:\n\s+db:\n\s+condition: service_healthy/);
    expect(app).toMatch(/DATABASE_URL: postgres:\/\/agent_memory:\$\{POSTGRES_PASSWORD\}@db:5432\/agent_memory/);
    expect(app).toMatch(/healthcheck:[\s\S]*\/readyz/);
    expect(app).toMatch(/'127\.0\.0\.1:\$\{AGENT_MEMORY_PORT:-8080\}:8080'/);
    expect(compose).toMatch(/\nvolumes:\n\s+db-data:/);
  });

  it('takes the database password from the environment and refuses to start without one', () => {
    expect(compose).toMatch(/POSTGRES_PASSWORD: \$\{POSTGRES_PASSWORD:\?[^}]+\}/);
    expect(compose).not.toMatch(/PASSWORD: [^$\s]/);
  });
});
