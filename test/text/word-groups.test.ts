import { describe, expect, it } from 'vitest';
import { wordGroups } from '../../src/text/word-groups.js';

describe('wordGroups', () => {
  it('finds the group of every irregular form a text uses, once, in order of first use', () => {
    expect(wordGroups('When did she go to Paris?')).toEqual(['go went gone']);
    expect(wordGroups('What did he MAKE, and where had he gone when he made it?')).toEqual([
      'make made',
      'go went gone',
    ]);
  });

  it("finds a verb's group by its regular inflections too", () => {
    // Stemming reduces these to the base form, which the group holds.
    expect(wordGroups('going')).toEqual(['go went gone']);
    expect(wordGroups('She makes pots')).toEqual(['make made']);
    expect(wordGroups('running, swimming, writing, flies, begins')).toEqual([
      'run ran',
      'swim swam swum',
      'write wrote written',
      'fly flew flown',
      'begin began begun',
    ]);
  });

  it('joins a standard word with its colloquial words, and groups that share a word into one', () => {
    expect(wordGroups('my fam')).toEqual(['family fam']);
    expect(wordGroups('a pic of Mom')).toEqual(['photo photograph picture pic pics', 'mother mom mum mama mommy']);
    // The plural and the colloquial group both hold "child".
    expect(wordGroups('How many children does she have?')).toEqual(['child children kid kids']);
    expect(wordGroups('the kids')).toEqual(['child children kid kids']);
  });

  it('finds nothing in regular forms, stop words or parts of words', () => {
    // Stemming already joins regular forms; be, have and do are stop words; "gopher" only starts with "go".
    expect(wordGroups('She painted, was painting and had done it')).toEqual([]);
    expect(wordGroups('a gopher undergoes nothing')).toEqual([]);
    expect(wordGroups('')).toEqual([]);
  });

  it('leaves out words that are as often other words', () => {
    expect(wordGroups('a bit of lead this fall')).toEqual([]);
  });
});
