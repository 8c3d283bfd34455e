/**
 * How deep a JSON text nests, read from the text itself before JSON.parse: a file of a million
 * brackets must be refused by its size, not by exhausting a stack (JSON.stringify, zod and the
 * database's jsonb parser all recurse). One pass, a loop, and a stack no deeper than the limit.
 */

/** Where the limit was crossed: the keys and indices down to the container one level too deep. */
export type JsonPath = (string | number)[];

export interface TooDeep {
  path: JsonPath;
  /** Which of the text's top-level values (from 0) it is in: a file of lines holds several. */
  value: number;
}

interface Open {
  array: boolean;
  /** An array's current element. */
  index: number;
  /** Where an object's current key starts and ends in the text (its quotes), once read: decoded only for a report. */
  keyStart: number;
  keyEnd: number;
  expectKey: boolean;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/** The end of the string that starts at `start` (its closing quote), or the text's end. */
function stringEnd(text: string, start: number): number {
  for (let quote = text.indexOf('"', start + 1); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    // Escaped when an odd number of backslashes stands before it.
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
  }
  return text.length;
}

function keyOf(raw: string): string {
  try {
    return String(JSON.parse(raw));
  } catch {
    return raw.slice(1, -1);
  }
}

/**
 * Where the first container nested deeper than `maxDepth` levels is (a top-level object is at
 * level 1), or undefined when none is. Malformed text is not judged here: JSON.parse does that.
 */
export function tooDeep(text: string, maxDepth: number): TooDeep | undefined {
  const stack: Open[] = [];
  let value = -1;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    const top = stack[stack.length - 1];
    switch (c) {
      case OPEN_OBJECT:
      case OPEN_ARRAY:
        if (stack.length === 0) value++;
        if (stack.length >= maxDepth) {
          const path = stack.map((o) => (o.array ? o.index : keyOf(text.slice(o.keyStart, o.keyEnd + 1))));
          return { path, value };
        }
        stack.push({ array: c === OPEN_ARRAY, index: 0, keyStart: 0, keyEnd: -1, expectKey: c === OPEN_OBJECT });
        break;
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        stack.pop();
        break;
      case COMMA:
        if (top?.array) top.index++;
        else if (top) top.expectKey = true;
        break;
      case COLON:
        if (top) top.expectKey = false;
        break;
      case QUOTE: {
        const end = stringEnd(text, i);
        if (top && !top.array && top.expectKey) {
          top.keyStart = i;
          top.keyEnd = end;
        }
        i = end;
        break;
      }
      default:
        break;
    }
  }
  return undefined;
}
