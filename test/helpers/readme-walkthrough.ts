/**
 * The README's walk-through as a script: its `sh walkthrough` blocks, in order, with each `# {…}`
 * answer line replaced by a marker, so that the output before a marker is the answer that line
 * describes. The blocks run as written; only the base URL the first block sets is the test's.
 */

const BLOCK = /^```sh walkthrough\n([\s\S]*?)^```$/gm;
const BASE_LINE = /^B=(\S+)$/m;
const MARKER = (n: number) => `@@walkthrough answer ${n}@@`;

export interface Walkthrough {
  /** The bash script to run. */
  script: string;
  /** The answer lines, in order, as the README shows them (`#` and indentation removed). */
  shapes: string[];
}

export function walkthroughBlocks(readme: string): string[] {
  return [...readme.matchAll(BLOCK)].map((m) => m[1] ?? '');
}

export function walkthroughScript(readme: string, baseUrl: string): Walkthrough {
  const blocks = walkthroughBlocks(readme);
  if (blocks.length === 0) throw new Error('the README has no ```sh walkthrough block');
  const text = blocks.join('\n');
  const bases = text.match(new RegExp(BASE_LINE.source, 'gm')) ?? [];
  if (bases.length !== 1) throw new Error(`the walk-through should set B= once, it sets it ${bases.length} times`);
  const shapes: string[] = [];
  const out: string[] = [];
  const lines = text.replace(BASE_LINE, `B=${baseUrl}`).split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] ?? '';
    if (!line.startsWith('# {')) {
      out.push(line);
      continue;
    }
    let shape = line.slice(1).trim();
    while (lines[i + 1]?.startsWith('#   ')) shape += (lines[++i] ?? '').slice(1).trim();
    out.push(`printf '\\n%s\\n' '${MARKER(shapes.length)}'`);
    shapes.push(shape);
  }
  return { script: ['set -euo pipefail', ...out].join('\n') + '\n', shapes };
}

/** The output that precedes each marker: the answers, in the order of `shapes`. */
export function answersIn(stdout: string, count: number): string[] {
  const answers: string[] = [];
  let rest = stdout;
  for (let n = 0; n < count; n++) {
    const at = rest.indexOf(MARKER(n));
    if (at < 0) throw new Error(`the walk-through stopped before answer ${n + 1}`);
    answers.push(rest.slice(0, at));
    rest = rest.slice(at + MARKER(n).length);
  }
  return answers;
}

/** The last top-level JSON value in a command's output (a block may print several before it). */
export function lastJsonValue(output: string): unknown {
  let depth = 0;
  let inString = false;
  let start = -1;
  let last: string | undefined;
  for (let i = 0; i < output.length; i++) {
    const c = output[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      if (depth++ === 0) start = i;
    } else if ((c === '}' || c === ']') && depth > 0 && --depth === 0) {
      last = output.slice(start, i + 1);
    }
  }
  if (last === undefined) throw new Error(`no JSON in the output: ${JSON.stringify(output.slice(0, 300))}`);
  return JSON.parse(last);
}

/** Stands for what a shape leaves out: `…` as a member of an object or an element of an array. */
export const MORE = '\u2026';

/**
 * Parses an answer line: JSON in which a bare `…` (outside strings) is an object member or array
 * element standing for more of the same, so `{"a":1, …}` is an object with at least `a`.
 */
export function parseShape(text: string): unknown {
  const stack: string[] = [];
  let json = '';
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] ?? '';
    if (inString) {
      json += c;
      if (c === '\\') json += text[++i] ?? '';
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    if (c === '{' || c === '[') stack.push(c);
    if (c === '}' || c === ']') stack.pop();
    json += c === MORE ? (stack.at(-1) === '{' ? `"${MORE}":null` : `"${MORE}"`) : c;
  }
  return JSON.parse(json);
}

const kind = (v: unknown) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/**
 * Where `actual` differs in shape from `shape`: the same keys (more only where the shape says `…`),
 * the same kinds of value; the values themselves may differ. Empty when they agree.
 */
export function shapeDifferences(shape: unknown, actual: unknown, at = '$'): string[] {
  if (kind(shape) !== kind(actual)) return [`${at}: ${kind(actual)} where the README shows ${kind(shape)}`];
  if (Array.isArray(shape) && Array.isArray(actual)) {
    const shown = shape.filter((v) => v !== MORE);
    const open = shown.length !== shape.length;
    const problems: string[] = [];
    if (open ? actual.length < shown.length : actual.length !== shown.length)
      problems.push(
        `${at}: ${actual.length} elements where the README shows ${open ? 'at least ' : ''}${shown.length}`,
      );
    shown.forEach((v, i) => {
      if (i < actual.length) problems.push(...shapeDifferences(v, actual[i], `${at}[${i}]`));
    });
    return problems;
  }
  if (kind(shape) === 'object') {
    const s = shape as Record<string, unknown>;
    const a = actual as Record<string, unknown>;
    const problems: string[] = [];
    for (const key of Object.keys(s)) {
      if (key === MORE) continue;
      if (!(key in a)) problems.push(`${at}.${key}: missing from the answer`);
      else problems.push(...shapeDifferences(s[key], a[key], `${at}.${key}`));
    }
    if (!(MORE in s))
      for (const key of Object.keys(a))
        if (!(key in s)) problems.push(`${at}.${key}: in the answer, not in the README`);
    return problems;
  }
  return [];
}
