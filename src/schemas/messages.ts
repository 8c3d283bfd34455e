import { z } from 'zod';

/**
 * Plain-word messages for every zod issue that has no message of its own, so that a client reads
 * "must be a whole number" instead of "Invalid input: expected int, received number". The field's
 * name is not part of the message: REST puts the path before it, the MCP SDK after it.
 */

type Issue = z.core.$ZodRawIssue;

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  object: 'a JSON object',
  record: 'a JSON object',
  array: 'an array',
  null: 'null',
};

const plural = (n: number | bigint, one: string, many: string): string => `${n} ${Number(n) === 1 ? one : many}`;

/** How far apart two short names are (Levenshtein), to suggest the field a typo meant. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    previous = current;
  }
  return previous[b.length]!;
}

/** The known field closest to an unknown one, when it is close enough to be a typo of it. */
export function closestField(unknown: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const name of known) {
    const d = distance(unknown.toLowerCase(), name.toLowerCase());
    if (d < bestDistance) [best, bestDistance] = [name, d];
  }
  return best !== undefined && bestDistance <= Math.max(2, Math.floor(best.length / 3)) ? best : undefined;
}

/** The field names of the object schema an unrecognized_keys issue came from. */
function knownFields(issue: Issue): string[] {
  const shape = (issue as { inst?: { _zod?: { def?: { shape?: object } } } }).inst?._zod?.def?.shape;
  return shape ? Object.keys(shape) : [];
}

/** The message for one unknown field (its name goes before it), with the field it most likely meant. */
export function unknownFieldMessage(key: string, known: readonly string[]): string {
  const meant = closestField(key, known);
  return `is not a known field${meant ? `; did you mean "${meant}"?` : ''}`;
}

function sizeMessage(issue: Issue & { code: 'too_small' | 'too_big' }): string | undefined {
  const small = issue.code === 'too_small';
  const bound = small ? issue.minimum : issue.maximum;
  const inclusive = issue.inclusive !== false;
  switch (issue.origin) {
    case 'string':
      if (small && Number(bound) === 1) return 'must not be empty';
      return `must be at ${small ? 'least' : 'most'} ${plural(bound, 'character', 'characters')} long`;
    case 'array':
    case 'set':
      return `must hold at ${small ? 'least' : 'most'} ${plural(bound, 'item', 'items')}`;
    case 'number':
    case 'int':
    case 'bigint':
      if (inclusive) return `must be at ${small ? 'least' : 'most'} ${String(bound)}`;
      return `must be ${small ? 'greater' : 'less'} than ${String(bound)}`;
    default:
      return undefined;
  }
}

export function plainMessage(issue: Issue): string | undefined {
  switch (issue.code) {
    case 'invalid_type': {
      // A missing field arrives as undefined; a coerced number that is not one as NaN.
      if (issue.input === undefined && !('received' in issue)) return 'is required';
      const words = TYPE_WORDS[issue.expected] ?? issue.expected;
      return `must be ${words}`;
    }
    case 'too_small':
    case 'too_big':
      return sizeMessage(issue);
    case 'invalid_value':
      if (issue.values.length === 1) return `must be ${JSON.stringify(issue.values[0])}`;
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}`;
    case 'invalid_format':
      if (issue.format === 'datetime') return 'must be an ISO-8601 time with an offset, such as 2026-01-31T09:30:00Z';
      if (issue.format === 'guid' || issue.format === 'uuid') return 'must be a UUID';
      return `must be a valid ${issue.format}`;
    case 'unrecognized_keys': {
      const known = knownFields(issue);
      // The MCP SDK reports one message per issue, so each key's name goes into it.
      return issue.keys.map((key) => `"${key}" ${unknownFieldMessage(key, known)}`).join('; ');
    }
    case 'invalid_union':
      return 'is not of an accepted form';
    default:
      return undefined;
  }
}

// One configuration for the process: REST, the MCP SDK's argument check and the CLI read the same words.
z.config({ customError: plainMessage });
