/**
 * What a clause states as a value: typed values (text, number, money, date, weekday, time) parsed
 * from its words, and compared.
 */

import { ARTICLES, MONTHS, NUMBER_WORDS, WEEKDAYS, stem } from './lexicon.js';
import type { Token } from './statement.js';
import { wordSet } from '../text/english.js';

export type Value =
  | { readonly kind: 'text'; readonly words: readonly string[]; readonly region?: boolean }
  | { readonly kind: 'number'; readonly n: number; readonly unit: string }
  | { readonly kind: 'money'; readonly n: number; readonly currency: string; readonly period: string }
  | { readonly kind: 'date'; readonly y?: number; readonly m?: number; readonly d?: number }
  | { readonly kind: 'weekday'; readonly d: number }
  | { readonly kind: 'time'; readonly minutes: number };

export function numberOf(w: string): number | undefined {
  if (w in NUMBER_WORDS) return NUMBER_WORDS[w];
  return /^\d+(\.\d+)?$/u.test(w) ? Number(w) : undefined;
}

const MONEY =
  /^(usd|eur|gbp)?\s*([$€£])?\s*(\d[\d,]*(?:\.\d+)?)\s*(k|m|bn|thousand|million|billion)?\s*(dollars?|euros?|pounds?|usd|eur|gbp)?(?:\s*(?:per|a|an|\/)\s*(hour|day|week|month|year|annum))?$/u;
const MULTIPLIERS: Readonly<Record<string, number>> = {
  k: 1e3,
  thousand: 1e3,
  m: 1e6,
  million: 1e6,
  bn: 1e9,
  billion: 1e9,
};
const CURRENCIES: Readonly<Record<string, string>> = {
  $: 'usd',
  usd: 'usd',
  dollar: 'usd',
  dollars: 'usd',
  '€': 'eur',
  eur: 'eur',
  euro: 'eur',
  euros: 'eur',
  '£': 'gbp',
  gbp: 'gbp',
  pound: 'gbp',
  pounds: 'gbp',
};

function parseMoney(s: string): Value | undefined {
  const m = MONEY.exec(s);
  if (!m) return undefined;
  const [, code, symbol, digits, multiplier, word, period] = m;
  const unit = code ?? symbol ?? word;
  if (unit === undefined) return undefined;
  const n = Number(digits!.replace(/,/gu, '')) * (multiplier ? (MULTIPLIERS[multiplier] ?? 1) : 1);
  // "$5k per month" and "$5k" are amounts of different things: the period is part of the unit.
  return { kind: 'money', n, currency: CURRENCIES[unit] ?? '', period: period === 'annum' ? 'year' : (period ?? '') };
}

function parseTime(s: string): Value | undefined {
  if (s === 'noon' || s === 'midday') return { kind: 'time', minutes: 12 * 60 };
  if (s === 'midnight') return { kind: 'time', minutes: 0 };
  const m = /^(\d{1,2})(?:[:.](\d{2}))?\s*(am|pm|a\.m|p\.m|h)?$/u.exec(s);
  if (!m) return undefined;
  const [, hh, mm, suffix] = m;
  // A bare number is not a time ("is 34"); "9:30" or "3pm" is.
  if (mm === undefined && suffix === undefined) return undefined;
  let hours = Number(hh);
  const minutes = Number(mm ?? 0);
  if (hours > 24 || minutes > 59) return undefined;
  if (suffix?.startsWith('p') && hours < 12) hours += 12;
  if (suffix?.startsWith('a') && hours === 12) hours = 0;
  return { kind: 'time', minutes: hours * 60 + minutes };
}

function parseDate(ws: readonly string[]): Value | undefined {
  const iso = ws.length === 1 ? /^(\d{4})-(\d{2})-(\d{2})$/u.exec(ws[0]!) : null;
  if (iso) return { kind: 'date', y: Number(iso[1]), m: Number(iso[2]), d: Number(iso[3]) };
  let y: number | undefined;
  let m: number | undefined;
  let d: number | undefined;
  for (const w of ws) {
    if (w === 'of' || w === 'the') continue;
    if (w in MONTHS && m === undefined) m = MONTHS[w];
    else if (/^\d{4}$/u.test(w) && y === undefined) y = Number(w);
    else if (/^\d{1,2}(st|nd|rd|th)?$/u.test(w) && d === undefined) d = Number.parseInt(w, 10);
    else return undefined;
  }
  // A bare day number is not a date; a month or a year makes it one.
  if (m === undefined && y === undefined) return undefined;
  if (d !== undefined && (d < 1 || d > 31)) return undefined;
  return {
    kind: 'date',
    ...(y !== undefined ? { y } : {}),
    ...(m !== undefined ? { m } : {}),
    ...(d !== undefined ? { d } : {}),
  };
}

export const TEMPORAL_PREPOSITIONS = wordSet('on at in for by from');

export function parseValue(ts: readonly Token[]): Value {
  let ws = ts.map((t) => t.w.replace(/,$/u, '')).filter((w) => w !== '');
  if (ws.length > 1 && TEMPORAL_PREPOSITIONS.has(ws[0]!)) ws = ws.slice(1);
  while (ws.length > 0 && (ARTICLES.has(ws[0]!) || ws[0] === 'next' || ws[0] === 'this')) ws = ws.slice(1);
  const s = ws.join(' ');
  const money = parseMoney(s);
  if (money) return money;
  const time = parseTime(s);
  if (time) return time;
  const day = ws.length === 1 ? WEEKDAYS[ws[0]!.replace(/s$/u, '')] : undefined;
  if (day !== undefined) return { kind: 'weekday', d: day };
  const date = parseDate(ws);
  if (date) return date;
  const n = ws.length > 0 ? numberOf(ws[0]!) : undefined;
  if (n !== undefined) return { kind: 'number', n, unit: ws.slice(1).map(stem).join(' ') };
  return { kind: 'text', words: ws.filter((w) => !ARTICLES.has(w)) };
}

export const isTemporal = (v: Value): boolean => v.kind === 'date' || v.kind === 'weekday' || v.kind === 'time';

export type Comparison = 'same' | 'compatible' | 'different' | 'incomparable';

function containsRun(hay: readonly string[], needle: readonly string[]): boolean {
  if (needle.length === 0 || needle.length > hay.length) return false;
  for (let i = 0; i + needle.length <= hay.length; i++) {
    if (needle.every((w, j) => hay[i + j] === w)) return true;
  }
  return false;
}

export function compareValues(a: Value, b: Value): Comparison {
  if (a.kind === 'text' && b.kind === 'text') {
    if (a.words.length === 0 || b.words.length === 0) return 'incomparable';
    if (a.words.join(' ') === b.words.join(' ')) return 'same';
    // "Paris" and "Paris, France", "Acme" and "Acme Corp": one refines the other, or both name
    // one thing; "Paris" and "France" are of different granularity.
    if (containsRun(a.words, b.words) || containsRun(b.words, a.words) || a.words[0] === b.words[0]) {
      return 'compatible';
    }
    if (Boolean(a.region) !== Boolean(b.region)) return 'incomparable';
    return 'different';
  }
  if (a.kind === 'number' && b.kind === 'number') {
    if (a.unit !== b.unit && a.unit !== '' && b.unit !== '') return 'incomparable';
    return a.n === b.n ? 'same' : 'different';
  }
  if (a.kind === 'money' && b.kind === 'money') {
    if (a.currency !== b.currency && a.currency !== '' && b.currency !== '') return 'incomparable';
    if (a.period !== b.period) return 'incomparable';
    return a.n === b.n ? 'same' : 'different';
  }
  if (a.kind === 'date' && b.kind === 'date') {
    let shared = 0;
    for (const f of ['y', 'm', 'd'] as const) {
      const x = a[f];
      const y = b[f];
      if (x === undefined || y === undefined) continue;
      if (x !== y) return 'different';
      shared++;
    }
    return shared === 0 ? 'incomparable' : 'same';
  }
  if (a.kind === 'weekday' && b.kind === 'weekday') return a.d === b.d ? 'same' : 'different';
  if (a.kind === 'time' && b.kind === 'time') return a.minutes === b.minutes ? 'same' : 'different';
  return 'incomparable';
}
