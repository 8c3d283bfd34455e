import { describe, expect, it } from 'vitest';
import {
  answersIn,
  lastJsonValue,
  parseShape,
  shapeDifferences,
  walkthroughBlocks,
  walkthroughScript,
} from '../helpers/readme-walkthrough.js';

/** The rules by which the README walk-through's answers are compared with what the README shows. */

const differs = (shape: string, actual: unknown) => shapeDifferences(parseShape(shape), actual);

describe('an answer line of the README', () => {
  it('matches an answer with the same keys and kinds of value, whatever the values', () => {
    expect(
      differs('{"id":"…","score":0.9,"tags":["a"],"next":null}', { id: 'x', score: 0, tags: ['b'], next: null }),
    ).toEqual([]);
  });

  it('refuses an answer with a key it does not show, unless it shows …', () => {
    expect(differs('{"semantic":1,"lexical":1}', { semantic: 1, lexical: 1, prior: 1 })).toEqual([
      '$.prior: in the answer, not in the README',
    ]);
    expect(differs('{"semantic":1, …}', { semantic: 1, lexical: 1 })).toEqual([]);
  });

  it('refuses an answer without a key it shows, or with another kind of value', () => {
    expect(differs('{"a":{"b":1, …}, …}', { a: {} })).toEqual(['$.a.b: missing from the answer']);
    expect(differs('{"a":1}', { a: '1' })).toEqual(['$.a: string where the README shows number']);
  });

  it('reads … in an array as more elements, compared with none', () => {
    expect(differs('{"r":[{"x":1}, …]}', { r: [{ x: 2 }, { y: 3 }] })).toEqual([]);
    expect(differs('{"r":[…]}', { r: [] })).toEqual([]);
    expect(differs('{"r":[{"x":1}]}', { r: [{ x: 1 }, { x: 2 }] })).toEqual([
      '$.r: 2 elements where the README shows 1',
    ]);
    expect(differs('{"r":[{"x":1}, …]}', { r: [] })).toEqual(['$.r: 0 elements where the README shows at least 1']);
  });

  it('keeps … inside strings as text', () => {
    expect(parseShape('{"detail":"agent \\"b…\\" is not one", …}')).toEqual({
      detail: 'agent "b…" is not one',
      '…': null,
    });
  });
});

describe('the walk-through script', () => {
  const readme = [
    'Start:',
    '```sh',
    'SETUP_TOKEN=x npm start',
    '```',
    '```sh walkthrough',
    'B=http://127.0.0.1:8080',
    'curl -s $B/v1/a',
    '# {"a":1,',
    '#   "b":2}',
    '```',
    'text',
    '```sh walkthrough',
    'echo "$B"',
    '```',
  ].join('\n');

  it('takes only the walk-through blocks, sets the base URL, and marks each answer line', () => {
    expect(walkthroughBlocks(readme)).toHaveLength(2);
    const { script, shapes } = walkthroughScript(readme, 'http://127.0.0.1:9');
    expect(shapes).toEqual(['{"a":1,"b":2}']);
    expect(script).toContain('B=http://127.0.0.1:9\n');
    expect(script).not.toContain('SETUP_TOKEN');
    expect(script).not.toContain('8080');
  });

  it('finds each answer before its marker, the last JSON value of it', () => {
    const { script, shapes } = walkthroughScript(readme, 'http://h');
    const marker = /'(@@[^']+@@)'/.exec(script)?.[1] ?? '';
    const answers = answersIn(`{"x":1}{"a":1,"b":"}"}\n${marker}\nhttp://h\n`, shapes.length);
    expect(lastJsonValue(answers[0] ?? '')).toEqual({ a: 1, b: '}' });
    expect(() => answersIn('nothing', 1)).toThrow(/stopped before answer 1/);
  });
});
