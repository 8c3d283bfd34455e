/**
 * Recall quality on LoCoMo, through the real domain core (bench/README.md has the metric).
 *   npm run eval:locomo -- --data FILE --qrels FILE [--json] [--dump FILE] [--ablations] [--set NAME=VALUE]…
 *
 * Every turn of a conversation is stored as one memory anchored to a subject named by the
 * conversation's sample_id, content "<speaker>: <text> (<session date>)", inside one session per
 * LoCoMo session (metadata: speaker, session date, turn id). Then each question of categories 1–4
 * recalls for its subject. Uses an in-memory embedded database unless DATABASE_URL is set (then it
 * writes a throwaway tenant); the embedder is the configured one (EMBEDDER, default `local`).
 * With --json, the last line of stdout is one JSON object with every figure. --dump writes every
 * question with its evidence and its ranked memories (turn ids, score, score_details) as JSON, for
 * the study of misses. --ablations recalls every question again with each part of the ranking
 * switched off (its FUSION constant set to 0) and prints recall@10 for each. --set changes a FUSION
 * constant for the whole run (a number; repeatable), to see how much a figure depends on it.
 * --loo NAME=V1,V2,… (repeatable; the grid is every combination) scores the constants honestly:
 * for each conversation, the combination with the best recall@10 on the other conversations is
 * chosen and scored on that one; the figure is recall@10 over every question, each scored with
 * constants chosen without its conversation (leave one conversation out).
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { z } from 'zod';
import { progressBar } from '../../src/cli/progress.js';
import { loadConfig } from '../../src/config.js';
import type { Actor } from '../../src/domain/core.js';
import { createSession, endSession } from '../../src/domain/subjects/sessions.js';
import { storeMemory } from '../../src/domain/store/store.js';
import { createTenant } from '../../src/domain/tenancy/tenants.js';
import { startCore } from '../../src/start-core.js';
import { recall } from '../../src/retrieval/recall.js';
import { FUSION, type Fusion } from '../../src/retrieval/fusion.js';
import { mean, METRICS, percentile, scoreQuestion, type QuestionScores } from './metrics.js';

const USAGE =
  'usage: npm run eval:locomo -- --data FILE --qrels FILE [--json] [--dump FILE] [--ablations] [--set NAME=VALUE]… [--loo NAME=V1,V2,…]…';
/** Combinations of --loo values at most: each costs one recall of every question. */
const MAX_GRID = 64;
const AGENT = 'locomo-eval';
const K = 20;
const CATEGORY_NAMES: Record<number, string> = { 1: 'multi-hop', 2: 'temporal', 3: 'open-domain', 4: 'single-hop' };

/** The parts of the ranking that --ablations switches off, one at a time, each by its FUSION constants. */
const PARTS: Record<string, Partial<Fusion>> = {
  'lexical share of the turn before': { previousLexicalShare: 0 },
  'session lexical score': { sessionLexicalShare: 0 },
  'window vectors': { windowSemanticShare: 0 },
  concepts: { conceptShare: 0 },
  "neighbours' similarity": { neighbourSemanticShare: 0 },
  "session's similarity": { sessionSemanticShare: 0 },
  'speaker field': { otherSpeakerPenalty: 0 },
  'time cue': { timeCueBoost: 0 },
  'length prior': { lengthPriorWeight: 0 },
};

/** FUSION's numeric constants, the ones --set may change. */
type NumericConstant = { [K in keyof Fusion]: Fusion[K] extends number ? K : never }[keyof Fusion];
const isConstant = (name: string): name is NumericConstant =>
  Object.hasOwn(FUSION, name) && typeof FUSION[name as keyof Fusion] === 'number';

const Turn = z.object({ speaker: z.string(), dia_id: z.string(), text: z.string() });
const Sample = z.object({
  sample_id: z.string(),
  conversation: z.record(z.string(), z.unknown()),
});
const Qrel = z.object({
  sample_id: z.string(),
  category: z.number().int(),
  question: z.string(),
  evidence: z.array(z.string()),
});

interface Session {
  date: string;
  /** When its turns were said, from its date and time; stored as each turn's occurred_at. */
  at: Date | undefined;
  turns: z.infer<typeof Turn>[];
}

function fail(message: string): never {
  process.stderr.write(`eval:locomo: ${message}\n${USAGE}\n`);
  process.exit(2);
}

function readJson(file: string): unknown {
  try {
    return JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (error) {
    return fail(`cannot read ${file}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** session_1, session_2, … in order, each with its date; the other keys (speakers, summaries) are skipped. */
function sessionsOf(conversation: Record<string, unknown>): Session[] {
  const sessions: Session[] = [];
  for (let n = 1; conversation[`session_${n}`] !== undefined; n++) {
    const turns = z.array(Turn).parse(conversation[`session_${n}`]);
    const date = conversation[`session_${n}_date_time`];
    sessions.push({
      date: typeof date === 'string' ? sessionDay(date) : '',
      at: typeof date === 'string' ? sessionTime(date) : undefined,
      turns,
    });
  }
  return sessions;
}

/** "1:56 pm on 8 May, 2023" → 2023-05-08T13:56Z: when the session's turns were said (occurred_at). */
function sessionTime(dateTime: string): Date | undefined {
  const m = /(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/i.exec(dateTime);
  if (!m) return undefined;
  const [, h = '', min = '', half = '', d = '', month = '', y = ''] = m;
  const hour = (Number(h) % 12) + (half.toLowerCase() === 'pm' ? 12 : 0);
  const at = new Date(`${d} ${month} ${y} ${hour}:${min}:00 UTC`);
  return Number.isNaN(at.getTime()) ? undefined : at;
}

/** "1:56 pm on 8 May, 2023" → "8 May 2023": the day; the time of day only adds noise words. */
function sessionDay(dateTime: string): string {
  const m = /(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})/.exec(dateTime);
  return m ? `${m[1]} ${m[2]} ${m[3]}` : dateTime.trim();
}

const { values } = parseArgs({
  options: {
    data: { type: 'string' },
    qrels: { type: 'string' },
    json: { type: 'boolean', default: false },
    dump: { type: 'string' },
    ablations: { type: 'boolean', default: false },
    set: { type: 'string', multiple: true, default: [] },
    loo: { type: 'string', multiple: true, default: [] },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
if (!values.data || !values.qrels) fail('--data and --qrels are required');
for (const assignment of values.set) {
  const [name = '', value = ''] = assignment.split('=');
  const n = Number(value);
  if (!isConstant(name) || value.trim() === '' || !Number.isFinite(n)) fail(`--set ${assignment}: not NAME=NUMBER`);
  FUSION[name] = n;
}

/** The --loo grid: every combination of the values given for each constant. */
let grid: Partial<Record<NumericConstant, number>>[] = [{}];
for (const assignment of values.loo) {
  const [name = '', list = ''] = assignment.split('=');
  const options = list.split(',').map((v) => (v.trim() === '' ? NaN : Number(v)));
  if (!isConstant(name) || options.length === 0 || !options.every(Number.isFinite)) {
    fail(`--loo ${assignment}: not NAME=NUMBER,NUMBER,…`);
  }
  grid = grid.flatMap((combo) => options.map((v) => ({ ...combo, [name]: v })));
}
if (grid.length > MAX_GRID) fail(`--loo: ${grid.length} combinations, at most ${MAX_GRID}`);

const samples = z.array(Sample).parse(readJson(values.data));
const qrels = fs
  .readFileSync(values.qrels, 'utf8')
  .split('\n')
  .filter((line) => line.trim().length > 0)
  .map((line) => Qrel.parse(JSON.parse(line)));
const conversations = samples.map((s) => ({ id: s.sample_id, sessions: sessionsOf(s.conversation) }));
const known = new Set(conversations.map((c) => c.id));
const questions = qrels.filter(
  (q) => q.category >= 1 && q.category <= 4 && q.evidence.length > 0 && known.has(q.sample_id),
);
if (questions.length === 0) fail('no question of categories 1–4 with evidence matches a conversation of --data');

const config = loadConfig({ ...process.env, DATA_DIR: process.env.DATA_DIR ?? ':memory:', LOG_LEVEL: 'silent' });
const running = await startCore(config, { log: pino({ level: 'silent' }) });
try {
  const { core } = running;
  const tenant = await createTenant(core, `locomo-eval-${Date.now()}`);
  const actor: Actor = { tenantId: tenant.tenantId, keyId: tenant.keyId, scopes: new Set(['read', 'write', 'admin']) };

  // Store every turn. The store path may merge a turn into an identical earlier one (reinforcing
  // it) or supersede an older one it contradicts: turnsOf maps each memory to the turns it holds.
  const turnsOf = new Map<string, string[]>();
  const memoryOf = new Map<string, string>();
  const outcomes = { created: 0, reinforced: 0, promoted: 0, superseded: 0 };
  const totalTurns = conversations.reduce((n, c) => n + c.sessions.reduce((m, s) => m + s.turns.length, 0), 0);
  const storing = progressBar('store '); // padded to line up with 'recall'
  let stored = 0;
  const storeStart = performance.now();
  for (const conversation of conversations) {
    const anchor = { anchorExternalId: conversation.id };
    for (const session of conversation.sessions) {
      const { id: sessionId } = await createSession(core, actor, {
        agentId: AGENT,
        anchor,
        metadata: { date: session.date },
      });
      for (const turn of session.turns) {
        const content = session.date
          ? `${turn.speaker}: ${turn.text} (${session.date})`
          : `${turn.speaker}: ${turn.text}`;
        const result = await storeMemory(core, actor, {
          agentId: AGENT,
          content,
          anchor,
          sessionId,
          metadata: { speaker: turn.speaker, date: session.date, dia_id: turn.dia_id },
          occurredAt: session.at,
        });
        outcomes[result.outcome]++;
        outcomes.superseded += result.supersedes.length;
        const key = `${conversation.id}/${turn.dia_id}`;
        memoryOf.set(key, result.memory.id);
        turnsOf.set(result.memory.id, [...(turnsOf.get(result.memory.id) ?? []), key]);
        storing.update(++stored, totalTurns);
      }
      await endSession(core, actor, sessionId);
    }
  }
  const storeSeconds = (performance.now() - storeStart) / 1000;
  storing.end();

  interface Recalled {
    sample: string;
    category: number;
    scores: QuestionScores;
    dump: unknown;
  }
  /** Recalls every question with the ranking as FUSION stands. */
  const recallAll = async (label: string, latencies: number[]): Promise<Recalled[]> => {
    const recalled: Recalled[] = [];
    const recalling = progressBar(label);
    for (const [i, q] of questions.entries()) {
      const evidence = new Set(q.evidence.map((id) => `${q.sample_id}/${id}`));
      const started = performance.now();
      const results = await recall(core, actor, {
        agentId: AGENT,
        query: q.question,
        anchor: { anchorExternalId: q.sample_id },
        limit: K,
        includeSuperseded: false,
      });
      latencies.push(performance.now() - started);
      const ranked = results.map((r) => turnsOf.get(r.id) ?? []);
      const relevantMemories = new Set([...evidence].flatMap((e) => memoryOf.get(e) ?? [])).size;
      const scores = scoreQuestion(ranked, evidence, relevantMemories);
      const dump = {
        sample_id: q.sample_id,
        question: q.question,
        category: q.category,
        evidence: q.evidence,
        'recall@10': scores['recall@10'],
        ranked: results.map((r) => ({
          turns: (turnsOf.get(r.id) ?? []).map((t) => t.slice(q.sample_id.length + 1)),
          content: r.content,
          score: r.score,
          score_details: r.score_details,
        })),
      };
      recalled.push({ sample: q.sample_id, category: q.category, scores, dump });
      recalling.update(i + 1, questions.length);
    }
    recalling.end();
    return recalled;
  };

  let unknownEvidence = 0;
  for (const q of questions) for (const id of q.evidence) if (!memoryOf.has(`${q.sample_id}/${id}`)) unknownEvidence++;
  const latencies: number[] = [];
  const perQuestion = await recallAll('recall', latencies);
  if (values.dump)
    fs.writeFileSync(
      values.dump,
      `${JSON.stringify(
        perQuestion.map((r) => r.dump),
        null,
        1,
      )}\n`,
    );
  latencies.sort((a, b) => a - b);

  const summarize = (rows: readonly Recalled[]) =>
    Object.fromEntries(METRICS.map((m) => [m, mean(rows.map((r) => r.scores[m]))])) as unknown as QuestionScores;
  const overall = summarize(perQuestion);
  const categories = [...new Set(perQuestion.map((r) => r.category))].sort();
  const perCategory = Object.fromEntries(
    categories.map((c) => {
      const rows = perQuestion.filter((r) => r.category === c);
      return [String(c), { name: CATEGORY_NAMES[c] ?? `category ${c}`, questions: rows.length, ...summarize(rows) }];
    }),
  );

  const f3 = (n: number) => n.toFixed(3);
  const line = (label: string, n: number, s: QuestionScores) =>
    `| ${label.padEnd(16)} | ${String(n).padStart(9)} | ${METRICS.map((m) => f3(s[m]).padStart(Math.max(9, m.length))).join(' | ')} |`;
  const out: string[] = [];
  out.push(
    `LoCoMo recall: ${conversations.length} conversations, ${totalTurns} turns, ${questions.length} questions (categories 1–4)`,
  );
  out.push(`engine ${running.engine}, embedder ${core.embedder.id}, recall limit ${K}`);
  out.push('');
  out.push(`| ${'category'.padEnd(16)} | questions | ${METRICS.map((m) => m.padStart(9)).join(' | ')} |`);
  out.push(
    `|${'-'.repeat(18)}|${'-'.repeat(10)}:|${METRICS.map((m) => `${'-'.repeat(Math.max(9, m.length) + 1)}:`).join('|')}|`,
  );
  for (const c of categories) {
    const p = perCategory[String(c)];
    if (p) out.push(line(`${c} ${p.name}`, p.questions, p));
  }
  out.push(line('all', perQuestion.length, overall));
  out.push('');
  const storeRate = totalTurns / storeSeconds;
  const p50 = percentile(latencies, 50);
  const p95 = percentile(latencies, 95);
  out.push(
    `store    ${storeRate.toFixed(1)} memories/s (${outcomes.created} created, ${outcomes.reinforced + outcomes.promoted} merged into an identical turn, ${outcomes.superseded} superseded)`,
  );
  out.push(`recall   p50 ${p50.toFixed(1)} ms, p95 ${p95.toFixed(1)} ms (${latencies.length} recalls, limit ${K})`);
  if (unknownEvidence > 0) out.push(`warning  ${unknownEvidence} evidence ids name no stored turn`);
  const ablations: Record<string, Record<string, number>> = {};
  if (values.ablations) {
    out.push('');
    out.push(
      `| ${'switched off'.padEnd(32)} | recall@10 | ${categories.map((c) => `${c} ${CATEGORY_NAMES[c] ?? ''}`.padStart(13)).join(' | ')} |`,
    );
    out.push(`|${'-'.repeat(34)}|${'-'.repeat(10)}:|${categories.map(() => `${'-'.repeat(14)}:`).join('|')}|`);
    const row = (label: string, rows: readonly Recalled[]) => {
      const byCategory = categories.map((c) => summarize(rows.filter((r) => r.category === c))['recall@10']);
      out.push(
        `| ${label.padEnd(32)} | ${f3(summarize(rows)['recall@10']).padStart(9)} | ${byCategory.map((v) => f3(v).padStart(13)).join(' | ')} |`,
      );
      ablations[label] = {
        'recall@10': summarize(rows)['recall@10'],
        ...Object.fromEntries(categories.map((c, i) => [String(c), byCategory[i] ?? 0])),
      };
    };
    row('nothing', perQuestion);
    for (const [part, off] of Object.entries(PARTS)) {
      const saved = { ...FUSION };
      Object.assign(FUSION, off);
      try {
        row(part, await recallAll(part.slice(0, 6).padEnd(6), []));
      } finally {
        Object.assign(FUSION, saved);
      }
    }
  }
  let leaveOneOut: { 'recall@10': number; folds: unknown[] } | undefined;
  if (values.loo.length > 0) {
    const runs: { combo: Partial<Record<NumericConstant, number>>; rows: Recalled[] }[] = [];
    for (const [i, combo] of grid.entries()) {
      const saved = { ...FUSION };
      Object.assign(FUSION, combo);
      try {
        runs.push({ combo, rows: await recallAll(`loo ${i + 1}`.padEnd(6), []) });
      } finally {
        Object.assign(FUSION, saved);
      }
    }
    const recall10 = (rows: readonly Recalled[]) => mean(rows.map((r) => r.scores['recall@10']));
    const heldOut: Recalled[] = [];
    const folds = conversations.map(({ id }) => {
      // The first best combination on the other conversations (ties keep the grid's order).
      let best = runs[0];
      let bestScore = -1;
      for (const run of runs) {
        const score = recall10(run.rows.filter((r) => r.sample !== id));
        if (score > bestScore) [best, bestScore] = [run, score];
      }
      const held = best?.rows.filter((r) => r.sample === id) ?? [];
      heldOut.push(...held);
      return { held_out: id, chosen: best?.combo ?? {}, train_recall10: bestScore, held_out_recall10: recall10(held) };
    });
    leaveOneOut = { 'recall@10': recall10(heldOut), folds };
    out.push('');
    out.push(
      `leave one conversation out: recall@10 ${f3(leaveOneOut['recall@10'])} over ${heldOut.length} questions (${grid.length} combinations; at the defaults ${f3(overall['recall@10'])})`,
    );
    for (const fold of folds) {
      out.push(
        `  ${fold.held_out.padEnd(10)} chosen ${JSON.stringify(fold.chosen)} on the others (${f3(fold.train_recall10)}), held out ${f3(fold.held_out_recall10)}`,
      );
    }
  }
  process.stdout.write(`${out.join('\n')}\n`);
  if (values.json) {
    const round = (n: number) => Math.round(n * 10000) / 10000;
    const rounded = (s: QuestionScores) => Object.fromEntries(METRICS.map((m) => [m, round(s[m])]));
    const summary = {
      ...rounded(overall),
      questions: perQuestion.length,
      per_category: Object.fromEntries(
        Object.entries(perCategory).map(([c, p]) => [c, { name: p.name, questions: p.questions, ...rounded(p) }]),
      ),
      turns: totalTurns,
      superseded: outcomes.superseded,
      store_per_second: round(storeRate),
      recall_p50_ms: round(p50),
      recall_p95_ms: round(p95),
      engine: running.engine,
      embedder: core.embedder.id,
      ...(values.ablations ? { ablations } : {}),
      ...(leaveOneOut ? { leave_one_out: leaveOneOut } : {}),
    };
    process.stdout.write(`${JSON.stringify(summary)}\n`);
  }
} finally {
  await running.close();
}
