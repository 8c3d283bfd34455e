import { randomUUID } from 'node:crypto';
import pg from 'pg';

/**
 * Whether TEST_DATABASE_URL is a Citus coordinator: the whole fast suite runs there too
 * (docs/scale-out.md#citus), and the few tests that need a database without Citus, or read plans
 * that are Citus' own there, skip themselves on it.
 */
export async function testDatabaseIsCitus(): Promise<boolean> {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) return false;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ citus: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'citus') AS citus`,
    );
    return rows[0]?.citus === true;
  } finally {
    await client.end();
  }
}

async function onNode(nodeUrl: string, statements: string[]): Promise<void> {
  const client = new pg.Client({ connectionString: nodeUrl });
  await client.connect();
  try {
    for (const s of statements) await client.query(s);
  } finally {
    await client.end();
  }
}

function inDatabase(nodeUrl: string, database: string): string {
  const u = new URL(nodeUrl);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * A database of its own on the cluster of `coordinatorUrl` (CITUS_TEST_URL): created on the
 * coordinator and on each of its workers (read from pg_dist_node, reached with the same user),
 * with `citus` and `vector` on each and the workers added: what docs/scale-out.md#citus asks of an
 * operator. Nothing is distributed yet; `drop` removes it from every node.
 */
export async function citusDatabase(coordinatorUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const client = new pg.Client({ connectionString: coordinatorUrl });
  await client.connect();
  let workers: { host: string; port: number }[];
  try {
    ({ rows: workers } = await client.query<{ host: string; port: number }>(
      `SELECT nodename AS host, nodeport AS port FROM pg_dist_node WHERE noderole = 'primary' AND groupid <> 0 ORDER BY 1, 2`,
    ));
  } finally {
    await client.end();
  }
  const nodes = [
    coordinatorUrl,
    ...workers.map((w) => {
      const u = new URL(coordinatorUrl);
      u.hostname = w.host;
      u.port = String(w.port);
      return u.toString();
    }),
  ];
  const name = `am_citus_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  for (const node of nodes) {
    await onNode(node, [`CREATE DATABASE ${name}`]);
    await onNode(inDatabase(node, name), ['CREATE EXTENSION citus', 'CREATE EXTENSION vector']);
  }
  const url = inDatabase(coordinatorUrl, name);
  await onNode(
    url,
    workers.map((w) => `SELECT citus_add_node('${w.host.replaceAll("'", "''")}', ${Number(w.port)})`),
  );
  return {
    url,
    drop: async () => {
      for (const node of nodes) {
        await onNode(node, [`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`]).catch(() => undefined);
      }
    },
  };
}
