import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { detectContradiction, detectContradictions } from '../../src/beliefs/contradiction.js';

interface Pair {
  readonly a: string;
  readonly b: string;
  readonly label: 'contradicting' | 'compatible' | 'unrelated';
}

const pairs = JSON.parse(
  readFileSync(new URL('../fixtures/contradiction-pairs.json', import.meta.url), 'utf8'),
) as readonly Pair[];

/** Both orders: the store asks with the newer statement first, and either may be the newer. */
function score(): { tp: number; fp: number; fn: number; tn: number; misses: string[] } {
  let tp = 0;
  let fp = 0;
  let fn = 0;
  let tn = 0;
  const misses: string[] = [];
  for (const pair of pairs) {
    for (const [newer, older] of [
      [pair.a, pair.b],
      [pair.b, pair.a],
    ] as const) {
      const verdict = detectContradiction(newer, older);
      const expected = pair.label === 'contradicting';
      if (verdict.contradicts && expected) tp++;
      else if (verdict.contradicts) {
        fp++;
        misses.push(`FP (${pair.label}, ${verdict.rule}): "${newer}" / "${older}"`);
      } else if (expected) {
        fn++;
        misses.push(`FN: "${newer}" / "${older}"`);
      } else tn++;
    }
  }
  return { tp, fp, fn, tn, misses };
}

describe('contradiction fixture', () => {
  it('is a fixture worth measuring against', () => {
    expect(pairs.length).toBeGreaterThanOrEqual(60);
    const labels = new Set(pairs.map((p) => p.label));
    expect(labels).toEqual(new Set(['contradicting', 'compatible', 'unrelated']));
  });

  it('reaches precision ≥ 0.9 and recall ≥ 0.6 on "contradicting", both orders of each pair', () => {
    const { tp, fp, fn, tn, misses } = score();
    const precision = tp / (tp + fp);
    const recall = tp / (tp + fn);
    console.log(
      `contradiction heuristic on ${pairs.length} pairs × 2 orders: precision ${precision.toFixed(3)}, ` +
        `recall ${recall.toFixed(3)} (TP ${tp}, FP ${fp}, FN ${fn}, TN ${tn})`,
    );
    for (const miss of misses) console.log(`  ${miss}`);
    expect(precision).toBeGreaterThanOrEqual(0.9);
    expect(recall).toBeGreaterThanOrEqual(0.6);
  });
});

const contradicting: readonly (readonly [string, string, string])[] = [
  ['Alice is vegetarian', 'Alice is not vegetarian', 'negation'],
  ['Eats meat', "Doesn't eat meat", 'negation'],
  ['Has a car', 'Has no car', 'negation'],
  ['Never drinks coffee', 'Drinks coffee every morning', 'negation'],
  ['Likes tea', 'Dislikes tea', 'negation'],
  ['Can swim', 'Cannot swim', 'negation'],
  ['The user smokes', 'The user has never smoked', 'negation'],
  ['lives in Paris', 'lives in Berlin', 'same-attribute'],
  ['Moved to Berlin', 'Lives in Paris', 'same-attribute'],
  ['Currently lives in Tokyo', 'Is based in Osaka', 'same-attribute'],
  ['budget is $5k', 'budget is $8k', 'numeric-change'],
  ['Prefers email', 'Prefers phone', 'same-attribute'],
  ['Prefers to be contacted by email', 'Prefers phone', 'same-attribute'],
  ['Works at Acme', 'Works at Globex', 'same-attribute'],
  ['Works for Initech', 'Works at Globex', 'same-attribute'],
  ['favorite color is blue', 'favorite color is green', 'same-attribute'],
  ['His favourite food is sushi', 'His favorite food is pizza', 'same-attribute'],
  ['is 34 years old', 'is 35 years old', 'numeric-change'],
  ['The user is 34', 'The user just turned 35', 'numeric-change'],
  ['the meeting is on Monday', 'the meeting is on Tuesday', 'date-change'],
  ['The meeting is on Monday', 'The meeting was moved to Thursday', 'date-change'],
  ['born on 3 May 1990', 'born on 4 May 1990', 'date-change'],
  ['The appointment is at 3pm', 'The appointment is at 4pm', 'date-change'],
  ['has 2 kids', 'has 3 kids', 'numeric-change'],
  ['Has two sisters', 'Has three sisters', 'numeric-change'],
  ["The user's name is Sam", "The user's name is Alex", 'same-attribute'],
  ['Alice is married', 'Alice is single', 'same-attribute'],
  ['Prefers the window seat', 'Prefers the aisle seat', 'same-attribute'],
  ['Prefers tea over coffee', 'Prefers coffee over tea', 'same-attribute'],
  ['Alice likes jazz. She does not like rock.', 'Alice likes rock', 'negation'],
  ['Lives in Paris and works at Acme', 'Works at Globex', 'same-attribute'],
];

const notContradicting: readonly (readonly [string, string])[] = [
  // Multi-valued predicates.
  ['likes tea', 'likes coffee'],
  ['speaks French', 'speaks Spanish'],
  ['has a dog', 'has a cat'],
  ['is a doctor', 'is a mother'],
  ['visited Paris', 'visited Berlin'],
  ['Owns a bike', 'Owns a car'],
  ['Is allergic to peanuts', 'Is allergic to shellfish'],
  // Unrelated, and other subjects.
  ['lives in Paris', 'likes jazz'],
  ['Alice lives in Paris', 'Bob lives in Berlin'],
  ['Alice is vegetarian', 'Bob is not vegetarian'],
  ['Her sister lives in Rome', 'She lives in Milan'],
  ["Alice's son is 5 years old", 'Alice is 35 years old'],
  ['Her birthday is June 12', 'His birthday is July 12'],
  ["His wife's name is Anna", 'His name is Bob'],
  ['Mom lives in Rome', 'Lives in Milan'],
  ['The meeting is on Monday', 'The launch is on Tuesday'],
  // Paraphrases and identical statements.
  ['Alice is vegetarian', 'Alice is vegetarian'],
  ['Lives in Paris', 'Resides in Paris'],
  ['Lives in Paris', 'Lives in Paris, France'],
  ['Prefers email', 'Prefers to be contacted by email'],
  ["Doesn't eat meat", 'Does not eat meat'],
  ['Has 2 kids', 'Has two children'],
  ['The budget is $5k', 'The budget is $5,000'],
  ['Born on 3 May 1990', 'Born on May 3, 1990'],
  ['The appointment is at 3pm', 'The appointment is at 15:00'],
  ['Works at Acme', 'Works at Acme as an engineer'],
  // Different granularity, time, qualifier or kind of value.
  ['Lives in Paris', 'Lives in France'],
  ['Lived in Paris', 'Lives in Berlin'],
  ['Lives in Paris', 'Works in Berlin'],
  ['Lives in Paris during the summer', 'Lives in Berlin'],
  ['Works at night', 'Works at Acme'],
  ['The meeting is on Monday', 'The meeting is at 10am'],
  ['Budget for the trip is $5k', 'Budget for the wedding is $20k'],
  ['Budget is $5k per month', 'Budget is $8k'],
  ['The budget is tight', 'The budget is flexible'],
  ['Prefers email for invoices', 'Prefers phone for urgent issues'],
  ['Prefers morning meetings', 'Prefers short meetings'],
  ['Has 2 meetings on Monday', 'Has 3 meetings on Tuesday'],
  ['Does not like coffee', 'Likes coffee ice cream'],
  ["Doesn't drink coffee at night", 'Drinks coffee'],
  ['Eats meat', 'Does not eat red meat'],
  ['Might move to Berlin', 'Lives in Paris'],
  ['Is 34 years old', 'Has 34 employees'],
  // Nothing to read.
  ['', 'Lives in Paris'],
  ['!!!', '???'],
];

describe('detectContradiction', () => {
  it.each(contradicting)('"%s" contradicts "%s" (%s), in both orders', (a, b, rule) => {
    expect(detectContradiction(a, b)).toEqual({ contradicts: true, rule });
    expect(detectContradiction(b, a)).toEqual({ contradicts: true, rule });
  });

  it.each(notContradicting)('"%s" does not contradict "%s", in both orders', (a, b) => {
    expect(detectContradiction(a, b)).toEqual({ contradicts: false, rule: 'none' });
    expect(detectContradiction(b, a)).toEqual({ contradicts: false, rule: 'none' });
  });

  it('judges a batch as it judges each pair', () => {
    const candidates = ['Lives in Berlin', 'Likes jazz', 'Lives in Paris, France', 'Does not live in Paris'];
    expect(detectContradictions('Lives in Paris', candidates)).toEqual(
      candidates.map((c) => detectContradiction('Lives in Paris', c)),
    );
    expect(detectContradictions('Lives in Paris', []).length).toBe(0);
  });

  it('takes microseconds per pair, and stays bounded on long input', () => {
    const all = pairs.flatMap((p) => [p.a, p.b]);
    for (let i = 0; i < 2000; i++) detectContradiction(all[i % all.length]!, all[(i * 7) % all.length]!);
    const rounds = 20_000;
    const started = performance.now();
    for (let i = 0; i < rounds; i++) detectContradiction(all[i % all.length]!, all[(i * 7) % all.length]!);
    const microseconds = ((performance.now() - started) * 1000) / rounds;
    console.log(`contradiction heuristic: ${microseconds.toFixed(1)} µs per pair`);
    // Ceilings, not targets: they catch a heuristic gone quadratic or backtracking, not a busy
    // machine (about 25 µs per pair and 2 ms for the long input when idle).
    expect(microseconds).toBeLessThan(1_000);

    const long = 'Lives in Paris and likes jazz. '.repeat(300);
    const longStarted = performance.now();
    detectContradiction(long, long);
    expect(performance.now() - longStarted).toBeLessThan(2_000);
  });
});
