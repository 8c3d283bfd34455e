/**
 * The memory filter language (docs/api.md, "Filters"): the convention of vector stores (Pinecone,
 * Chroma) and their LangChain wrappers, parsed into a typed tree whose errors name the JSON path of
 * what is wrong. Compiled to SQL by src/db/memory-filter.ts; recall, the lists and export share it.
 */

import { BINDINGS } from '../vocabulary.js';

/** The built-in fields a filter may name beside `metadata.<key>`. */
export const BUILT_IN_FIELDS = ['agent_id', 'binding', 'occurred_at', 'created_at', 'pinned'] as const;
export type BuiltInField = (typeof BUILT_IN_FIELDS)[number];

/** How deep `$and`, `$or` and `$not` may nest (the top level is depth 1). */
export const FILTER_MAX_DEPTH = 6;
/** How many conditions a filter may hold in all; each value of an `$in`/`$nin` list counts as one. */
export const FILTER_MAX_CONDITIONS = 64;
/** The longest metadata key, and the longest string compared. */
export const FILTER_MAX_KEY_LENGTH = 256;
export const FILTER_MAX_STRING_LENGTH = 1000;

export type Scalar = string | number | boolean;

export type FilterField = { kind: 'metadata'; key: string } | { kind: 'builtin'; name: BuiltInField };

export type Comparison =
  | { op: 'eq' | 'ne'; field: FilterField; value: Scalar }
  | { op: 'in' | 'nin'; field: FilterField; values: Scalar[] }
  | { op: 'gt' | 'gte' | 'lt' | 'lte'; field: FilterField; value: string | number }
  | { op: 'exists'; field: FilterField; value: boolean };

export type MemoryFilter = { op: 'and' | 'or'; of: MemoryFilter[] } | { op: 'not'; of: MemoryFilter } | Comparison;

export interface FilterIssue {
  /** Where in the filter, as JSON path steps below the filter itself. */
  path: (string | number)[];
  message: string;
}

export type FilterParse = { ok: true; filter: MemoryFilter | null } | { ok: false; issue: FilterIssue };

const FIELD_OPERATORS = ['$eq', '$ne', '$in', '$nin', '$gt', '$gte', '$lt', '$lte', '$exists'] as const;
type FieldOperator = (typeof FIELD_OPERATORS)[number];
const LOGICAL_OPERATORS = ['$and', '$or', '$not'] as const;

class Refused extends Error {
  constructor(readonly issue: FilterIssue) {
    super(issue.message);
  }
}

const refuse = (path: (string | number)[], message: string): never => {
  throw new Refused({ path, message });
};

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

const describeType = (v: unknown): string => (v === null ? 'null' : Array.isArray(v) ? 'an array' : typeof v);

/** The ISO-8601 date-times a built-in time field is compared with: a date, or a date-time with its offset. */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}(?:T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:\d{2}))?$/;

/** Parses and checks a filter; `{}` (or nothing) is no filter at all. */
export function parseFilter(input: unknown): FilterParse {
  const state = { conditions: 0 };
  try {
    if (input === undefined || input === null) return { ok: true, filter: null };
    if (!isObject(input)) refuse([], `must be a JSON object, not ${describeType(input)}`);
    if (Object.keys(input).length === 0) return { ok: true, filter: null };
    return { ok: true, filter: parseObject(input as Record<string, unknown>, [], 1, state) };
  } catch (error) {
    if (error instanceof Refused) return { ok: false, issue: error.issue };
    throw error;
  }
}

/** One object of a filter: each key a field or a logical operator, all of them to hold. */
function parseObject(
  value: Record<string, unknown>,
  path: (string | number)[],
  depth: number,
  state: { conditions: number },
): MemoryFilter {
  if (depth > FILTER_MAX_DEPTH) refuse(path, `nests deeper than ${FILTER_MAX_DEPTH} levels of $and, $or and $not`);
  const entries = Object.entries(value);
  if (entries.length === 0) refuse(path, 'must hold at least one condition');
  const parts = entries.map(([key, child]): MemoryFilter => {
    const at = [...path, key];
    if (key.startsWith('$')) {
      if (key === '$and' || key === '$or') {
        if (!Array.isArray(child) || child.length === 0) refuse(at, 'must be a non-empty array of filter objects');
        const of = (child as unknown[]).map((c, i) => {
          if (!isObject(c)) refuse([...at, i], `must be a filter object, not ${describeType(c)}`);
          return parseObject(c as Record<string, unknown>, [...at, i], depth + 1, state);
        });
        return of.length === 1 ? (of[0] as MemoryFilter) : { op: key === '$and' ? 'and' : 'or', of };
      }
      if (key === '$not') {
        if (!isObject(child)) refuse(at, `must be a filter object, not ${describeType(child)}`);
        return { op: 'not', of: parseObject(child as Record<string, unknown>, at, depth + 1, state) };
      }
      return refuse(
        at,
        FIELD_OPERATORS.includes(key as FieldOperator)
          ? `${key} applies to a field: write {"metadata.<key>": {"${key}": …}}`
          : `unknown operator ${key}; the logical operators are ${LOGICAL_OPERATORS.join(', ')}`,
      );
    }
    return parseField(parseFieldName(key, at), child, at, state);
  });
  return parts.length === 1 ? (parts[0] as MemoryFilter) : { op: 'and', of: parts };
}

function parseFieldName(key: string, at: (string | number)[]): FilterField {
  if (key.startsWith('metadata.')) {
    const name = key.slice('metadata.'.length);
    if (name.length === 0) refuse(at, 'names no metadata key: write metadata.<key>');
    if (name.length > FILTER_MAX_KEY_LENGTH) refuse(at, `names a metadata key longer than ${FILTER_MAX_KEY_LENGTH}`);
    if (name.includes('\u0000')) refuse(at, 'names a metadata key holding U+0000');
    return { kind: 'metadata', key: name };
  }
  if ((BUILT_IN_FIELDS as readonly string[]).includes(key)) return { kind: 'builtin', name: key as BuiltInField };
  return refuse(at, `unknown field; a filter names metadata.<key> or one of ${BUILT_IN_FIELDS.join(', ')}`);
}

/** A field's condition: a value (shorthand for $eq) or an object of operators, all of them to hold. */
function parseField(
  field: FilterField,
  value: unknown,
  path: (string | number)[],
  state: { conditions: number },
): MemoryFilter {
  if (!isObject(value)) return comparison(field, '$eq', value, path, state);
  const entries = Object.entries(value);
  if (entries.length === 0) refuse(path, 'must hold a value or at least one operator');
  const parts = entries.map(([op, operand]) => {
    if (!FIELD_OPERATORS.includes(op as FieldOperator)) {
      refuse(
        [...path, op],
        op.startsWith('$')
          ? `unknown operator ${op}; a field takes ${FIELD_OPERATORS.join(', ')}`
          : 'is not an operator: compare a metadata value with an object through metadata.<key>, or use $eq',
      );
    }
    return comparison(field, op as FieldOperator, operand, [...path, op], state);
  });
  return parts.length === 1 ? (parts[0] as MemoryFilter) : { op: 'and', of: parts };
}

function count(state: { conditions: number }, n: number, path: (string | number)[]): void {
  state.conditions += n;
  if (state.conditions > FILTER_MAX_CONDITIONS) {
    refuse(path, `makes the filter hold more than ${FILTER_MAX_CONDITIONS} conditions (each $in or $nin value counts)`);
  }
}

function comparison(
  field: FilterField,
  op: FieldOperator,
  operand: unknown,
  path: (string | number)[],
  state: { conditions: number },
): Comparison {
  if (op === '$exists') {
    if (field.kind === 'builtin') refuse(path, `${field.name} is always set: $exists applies to metadata keys`);
    if (typeof operand !== 'boolean') refuse(path, `must be true or false, not ${describeType(operand)}`);
    count(state, 1, path);
    return { op: 'exists', field, value: operand as boolean };
  }
  if (op === '$in' || op === '$nin') {
    if (!Array.isArray(operand) || operand.length === 0) refuse(path, 'must be a non-empty array of values');
    const values = (operand as unknown[]).map((v, i) => scalar(field, v, [...path, i], false));
    count(state, values.length, path);
    return { op: op === '$in' ? 'in' : 'nin', field, values };
  }
  if (op === '$eq' || op === '$ne') {
    const value = scalar(field, operand, path, false);
    count(state, 1, path);
    return { op: op === '$eq' ? 'eq' : 'ne', field, value };
  }
  const value = scalar(field, operand, path, true) as string | number;
  count(state, 1, path);
  return { op: op.slice(1) as 'gt' | 'gte' | 'lt' | 'lte', field, value };
}

/** A value compared with a field, checked against the field's type. */
function scalar(field: FilterField, v: unknown, path: (string | number)[], ordered: boolean): Scalar {
  if (v === null) refuse(path, 'must not be null: test for a missing key with {"$exists": false}');
  if (Array.isArray(v)) refuse(path, 'must be a single value: compare with a list through $in');
  if (isObject(v)) refuse(path, 'must be a string, a number or a boolean');
  if (typeof v === 'string') {
    if (v.length > FILTER_MAX_STRING_LENGTH) refuse(path, `must be at most ${FILTER_MAX_STRING_LENGTH} characters`);
    if (v.includes('\u0000')) refuse(path, 'must not contain the character U+0000');
  }
  if (field.kind === 'metadata') {
    if (ordered && typeof v === 'boolean') refuse(path, 'must be a number or a string: booleans are not ordered');
    return v as Scalar;
  }
  switch (field.name) {
    case 'agent_id':
      if (typeof v !== 'string') refuse(path, `must be a string (agent_id), not ${describeType(v)}`);
      if (ordered) refuse(path, 'agent_id takes $eq, $ne, $in and $nin');
      return v as string;
    case 'binding':
      if (ordered) refuse(path, 'binding takes $eq, $ne, $in and $nin');
      if (typeof v !== 'string' || !(BINDINGS as readonly string[]).includes(v)) {
        refuse(path, `must be one of ${BINDINGS.join(', ')}`);
      }
      return v as string;
    case 'pinned':
      if (typeof v !== 'boolean') refuse(path, `must be true or false (pinned), not ${describeType(v)}`);
      if (ordered) refuse(path, 'pinned takes $eq, $ne, $in and $nin');
      return v as boolean;
    case 'occurred_at':
    case 'created_at':
      if (typeof v !== 'string' || !ISO_DATE_TIME.test(v) || Number.isNaN(Date.parse(v))) {
        refuse(
          path,
          `must be an ISO-8601 date or date-time with its offset (${field.name}), e.g. 2025-01-31T09:00:00Z`,
        );
      }
      return v as string;
  }
}

/** A filter already checked (by the request's schema): parsed again for its tree; null for none. */
export function checkedFilter(input: unknown): MemoryFilter | null {
  const parsed = parseFilter(input);
  if (!parsed.ok) throw new Error(`an unchecked filter reached the domain: ${parsed.issue.message}`);
  return parsed.filter;
}
