import { readFileSync } from 'node:fs';
import type { ConversationMessage } from '../../src/extraction/extractor.js';

/** test/fixtures/conversations.json: conversations and the facts a careful reader keeps. */
export interface FixtureConversation {
  id: string;
  split: 'dev' | 'holdout';
  messages: (ConversationMessage & { name?: string })[];
  facts: string[];
}

export function loadConversations(): FixtureConversation[] {
  const url = new URL('../fixtures/conversations.json', import.meta.url);
  return (JSON.parse(readFileSync(url, 'utf8')) as { conversations: FixtureConversation[] }).conversations;
}

/**
 * The match rule stated in the fixture: Dice coefficient of content-token sets ≥ 0.6. The same
 * normalization applies to both sides, so it favours neither phrasing.
 */
export const MATCH_THRESHOLD = 0.6;

const STOP = new Set(
  (
    'a an the user is are am was were be been being has have had do does did to of in on at for with from by as ' +
    'and or but so it its that this these those they them their theirs he him his she her i me my we us our you ' +
    'your there about into over than then too very'
  ).split(' '),
);

function stem(word: string): string {
  if (word.length > 4 && word.endsWith('ies')) return `${word.slice(0, -3)}y`;
  if (word.length > 5 && word.endsWith('ing')) return word.slice(0, -3);
  if (word.length > 4 && word.endsWith('ed')) return word.slice(0, -2);
  if (word.length > 4 && word.endsWith('es')) return word.slice(0, -2);
  if (word.length > 3 && word.endsWith('s') && !word.endsWith('ss')) return word.slice(0, -1);
  return word;
}

export function contentTokens(text: string): Set<string> {
  const normalized = text
    .toLowerCase()
    .replace(/[\u2018\u2019]/gu, "'")
    .replace(/n't\b/gu, ' not')
    .replace(/'s\b/gu, '')
    .replace(/'/gu, '');
  const tokens = normalized.split(/[^\p{L}\p{N}#$%€]+/u).filter((t) => t.length > 0 && !STOP.has(t));
  return new Set(tokens.map(stem));
}

export function dice(a: string, b: string): number {
  const x = contentTokens(a);
  const y = contentTokens(b);
  if (x.size + y.size === 0) return 0;
  let shared = 0;
  for (const t of x) if (y.has(t)) shared++;
  return (2 * shared) / (x.size + y.size);
}

export interface Score {
  extracted: number;
  expected: number;
  matched: number;
  /** Extracted facts that match no expected fact. */
  unmatched: string[];
  /** Expected facts that no extracted fact matches. */
  missed: string[];
}

/** One-to-one matching, best pair first. */
export function score(extracted: readonly string[], expected: readonly string[]): Score {
  const pairs: { i: number; j: number; d: number }[] = [];
  extracted.forEach((e, i) =>
    expected.forEach((x, j) => {
      const d = dice(e, x);
      if (d >= MATCH_THRESHOLD) pairs.push({ i, j, d });
    }),
  );
  pairs.sort((p, q) => q.d - p.d || p.i - q.i || p.j - q.j);
  const usedE = new Set<number>();
  const usedX = new Set<number>();
  for (const { i, j } of pairs) {
    if (usedE.has(i) || usedX.has(j)) continue;
    usedE.add(i);
    usedX.add(j);
  }
  return {
    extracted: extracted.length,
    expected: expected.length,
    matched: usedE.size,
    unmatched: extracted.filter((_, i) => !usedE.has(i)),
    missed: expected.filter((_, j) => !usedX.has(j)),
  };
}
