import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { TABLES } from '../../src/db/schema.js';
import { engine, sharedRunning } from '../helpers/harness.js';

interface ColumnInfo {
  table_name: string;
  column_name: string;
  is_nullable: 'YES' | 'NO';
  data_type: string;
  udt_name: string;
}

const NUMBERS = new Set(['smallint', 'integer', 'bigint', 'real', 'double precision', 'numeric']);

// Anything outside ColumnKind comes back as its own name, so the comparison shows it.
function kindOf(c: ColumnInfo): string {
  if (c.data_type === 'timestamp with time zone') return 'timestamptz';
  if (c.data_type === 'ARRAY') return 'array';
  if (NUMBERS.has(c.data_type)) return 'number';
  if (c.data_type === 'USER-DEFINED') return c.udt_name;
  return c.data_type;
}

type Described = Record<string, Record<string, { kind: string; nullable: boolean }>>;

function describeColumns(rows: ColumnInfo[]): Described {
  const tables: Described = {};
  for (const c of rows) {
    (tables[c.table_name] ??= {})[c.column_name] = { kind: kindOf(c), nullable: c.is_nullable === 'YES' };
  }
  return tables;
}

describe(`src/db/schema.ts on ${engine}`, () => {
  it('declares every table and column the migrations create, with their nullability and type', async () => {
    const { db } = (await sharedRunning()).core;
    const { rows } = await sql<ColumnInfo>`
      SELECT table_name, column_name, is_nullable, data_type, udt_name
      FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name <> 'schema_migrations'
        -- Not ours: the views an extension creates in the schema (Citus' citus_tables, citus_shards…).
        AND NOT EXISTS (
          SELECT 1 FROM pg_depend AS d
          WHERE d.classid = 'pg_class'::regclass AND d.deptype = 'e'
            AND d.objid = (quote_ident(table_schema) || '.' || quote_ident(table_name))::regclass
        )
        -- A partition's columns are its table's (memories_p00 … of memories, migration 0017).
        AND NOT EXISTS (
          SELECT 1 FROM pg_inherits AS i
          WHERE i.inhrelid = (quote_ident(table_schema) || '.' || quote_ident(table_name))::regclass
        )
      ORDER BY table_name, column_name`.execute(db);
    expect(describeColumns(rows)).toEqual(TABLES);
  });
});
