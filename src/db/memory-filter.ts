import { sql, type RawBuilder, type SqlBool } from 'kysely';
import type { Comparison, FilterField, MemoryFilter, Scalar } from '../filter/language.js';

/**
 * A memory filter (src/filter/language.ts) as an SQL condition on the memories row `alias`. Every
 * value and every metadata key is a bind parameter; only the shape of the filter shapes the text.
 * Every condition is true or false, never NULL, so that $not and $nin are the plain negations of
 * what they negate (a memory without the key is "not equal").
 *
 * Metadata equality is JSON containment (`metadata @> {"key": value}`), which the GIN index of
 * migration 0012 serves; comparisons hold only between values of one JSON type: numbers as numbers,
 * strings byte by byte (COLLATE "C", so ISO-8601 times in one format compare as times), and a
 * number never matches a string.
 */
export function memoryFilterSql(filter: MemoryFilter, alias = 'm'): RawBuilder<SqlBool> {
  switch (filter.op) {
    case 'and':
    case 'or':
      return sql<SqlBool>`(${sql.join(
        filter.of.map((f) => memoryFilterSql(f, alias)),
        filter.op === 'and' ? sql` AND ` : sql` OR `,
      )})`;
    case 'not':
      return sql<SqlBool>`(NOT ${memoryFilterSql(filter.of, alias)})`;
    default:
      return comparison(filter, alias);
  }
}

function comparison(c: Comparison, alias: string): RawBuilder<SqlBool> {
  const { field } = c;
  switch (c.op) {
    case 'eq':
      return equals(field, c.value, alias);
    case 'ne':
      return sql<SqlBool>`(NOT ${equals(field, c.value, alias)})`;
    case 'in':
      return anyEquals(field, c.values, alias);
    case 'nin':
      return sql<SqlBool>`(NOT ${anyEquals(field, c.values, alias)})`;
    case 'exists': {
      const present = sql<SqlBool>`(${sql.ref(`${alias}.metadata`)} -> ${metadataKey(field)}::text IS NOT NULL)`;
      return c.value ? present : sql<SqlBool>`(NOT ${present})`;
    }
    default:
      return ordered(field, c.op, c.value, alias);
  }
}

function metadataKey(field: FilterField): string {
  if (field.kind !== 'metadata') throw new Error('a metadata condition on a built-in field');
  return field.key;
}

/** A built-in time field's operand as an instant: a date alone is midnight UTC, as in Date.parse. */
const instant = (value: Scalar): string => new Date(String(value)).toISOString();

function builtin(field: Extract<FilterField, { kind: 'builtin' }>, alias: string, value: Scalar) {
  const column = sql.ref(`${alias}.${field.name}`);
  switch (field.name) {
    case 'occurred_at':
    case 'created_at':
      return { column, value: sql`${instant(value)}::timestamptz` };
    case 'pinned':
      return { column, value: sql`${value}::boolean` };
    default:
      return { column, value: sql`${value}::text` };
  }
}

function equals(field: FilterField, value: Scalar, alias: string): RawBuilder<SqlBool> {
  if (field.kind === 'builtin') {
    const b = builtin(field, alias, value);
    return sql<SqlBool>`(${b.column} = ${b.value})`;
  }
  // Containment, so that the GIN index on metadata serves it; the key travels inside the parameter.
  return sql<SqlBool>`(${sql.ref(`${alias}.metadata`)} @> ${JSON.stringify({ [field.key]: value })}::jsonb)`;
}

function anyEquals(field: FilterField, values: readonly Scalar[], alias: string): RawBuilder<SqlBool> {
  if (values.length === 1) return equals(field, values[0] as Scalar, alias);
  return sql<SqlBool>`(${sql.join(
    values.map((v) => equals(field, v, alias)),
    sql` OR `,
  )})`;
}

const OPERATORS = { gt: sql.raw('>'), gte: sql.raw('>='), lt: sql.raw('<'), lte: sql.raw('<=') } as const;

function ordered(
  field: FilterField,
  op: keyof typeof OPERATORS,
  value: string | number,
  alias: string,
): RawBuilder<SqlBool> {
  const operator = OPERATORS[op];
  if (field.kind === 'builtin') {
    const b = builtin(field, alias, value);
    return sql<SqlBool>`(${b.column} ${operator} ${b.value})`;
  }
  const item = sql`(${sql.ref(`${alias}.metadata`)} -> ${field.key}::text)`;
  // CASE, not AND: SQL may evaluate either side of an AND first, and the cast fails on other types.
  return typeof value === 'number'
    ? sql<SqlBool>`(CASE WHEN jsonb_typeof(${item}) = 'number' THEN ${item}::numeric ${operator} ${value}::numeric ELSE false END)`
    : sql<SqlBool>`(CASE WHEN jsonb_typeof(${item}) = 'string' THEN (${item} #>> '{}') COLLATE "C" ${operator} ${value}::text COLLATE "C" ELSE false END)`;
}
