import { describe, expect, it } from 'vitest';
import { irregularForms } from '../../src/text/irregular-forms.js';

describe('irregularForms', () => {
  it('finds the group of every irregular form a text uses, once, in order of first use', () => {
    expect(irregularForms('When did she go to Paris?')).toEqual(['go went gone']);
    expect(irregularForms('What did he MAKE, and where had he gone when he made it?')).toEqual([
      'make made',
      'go went gone',
    ]);
    expect(irregularForms('How many children does she have?')).toEqual(['child children']);
  });

  it('finds nothing in regular forms, stop words or parts of words', () => {
    // Stemming already joins regular forms; be, have and do are stop words; "gopher" only starts with "go".
    expect(irregularForms('She painted, was painting and had done it')).toEqual([]);
    expect(irregularForms('a gopher undergoes nothing')).toEqual([]);
    expect(irregularForms('')).toEqual([]);
  });

  it('leaves out forms that are common other words', () => {
    expect(irregularForms('a bit of lead this fall')).toEqual([]);
  });
});
