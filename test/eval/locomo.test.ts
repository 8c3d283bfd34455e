import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { childEnv } from '../helpers/cli.js';

const run = promisify(execFile);
const TSX = join('node_modules', '.bin', 'tsx');

/** A conversation in LoCoMo's format, small enough that the answers are obvious. */
const data = [
  {
    sample_id: 'conv-t',
    conversation: {
      speaker_a: 'Ana',
      speaker_b: 'Ben',
      session_1_date_time: '1:56 pm on 8 May, 2023',
      session_1: [
        { speaker: 'Ana', dia_id: 'D1:1', text: 'I adopted a grey cat called Pixel yesterday.' },
        { speaker: 'Ben', dia_id: 'D1:2', text: 'Lovely! I started learning the cello this month.' },
        { speaker: 'Ana', dia_id: 'D1:3', text: 'My sister lives in Porto and teaches chemistry.' },
      ],
      session_2_date_time: '10:00 am on 20 June, 2023',
      session_2: [
        { speaker: 'Ben', dia_id: 'D2:1', text: 'I played my first cello recital last night.' },
        { speaker: 'Ana', dia_id: 'D2:2', text: 'Pixel knocked my coffee off the table again.' },
      ],
    },
    qa: [],
  },
];
const qrels = [
  { sample_id: 'conv-t', category: 4, question: 'What is the name of Ana’s cat?', evidence: ['D1:1'] },
  { sample_id: 'conv-t', category: 1, question: 'What instrument does Ben play?', evidence: ['D1:2', 'D2:1'] },
  { sample_id: 'conv-t', category: 2, question: 'Where does Ana’s sister live?', evidence: ['D1:3'] },
  // Category 5 (adversarial) and questions without evidence are not recalls.
  { sample_id: 'conv-t', category: 5, question: 'What is Ben’s dog called?', evidence: ['D1:2'] },
  { sample_id: 'conv-t', category: 4, question: 'Unanswerable', evidence: [] },
];

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'locomo-'));
  await writeFile(join(dir, 'data.json'), JSON.stringify(data));
  await writeFile(join(dir, 'qrels.jsonl'), qrels.map((q) => JSON.stringify(q)).join('\n'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('npm run eval:locomo', () => {
  it('stores the turns, recalls each question and ends stdout with the figures as JSON', async () => {
    const { stdout, stderr } = await run(
      TSX,
      ['tools/eval/locomo.ts', '--data', join(dir, 'data.json'), '--qrels', join(dir, 'qrels.jsonl'), '--json'],
      // Always embedded and in memory, whatever engine the suite runs on.
      { env: childEnv({}), timeout: 60_000 },
    );
    const lines = stdout.trim().split('\n');
    const summary = JSON.parse(lines[lines.length - 1] ?? '');
    expect(Object.keys(summary)).toEqual(
      expect.arrayContaining(['recall@5', 'recall@10', 'recall@20', 'mrr', 'ndcg@10', 'questions', 'per_category']),
    );
    expect(summary.questions).toBe(3);
    expect(Object.keys(summary.per_category).sort()).toEqual(['1', '2', '4']);
    expect(summary.turns).toBe(5);
    expect(summary.engine).toBe('pglite');
    // Five memories and a limit of 20: every evidence turn is recalled.
    expect(summary['recall@20']).toBe(1);
    expect(stdout).toMatch(/\| all +\| +3 \|/);
    expect(stderr).toMatch(/recall +\[#+\] 3\/3/);
  });

  it('dumps every question with its ranking, and recalls again with each part of the ranking off', async () => {
    const dump = join(dir, 'dump.json');
    const { stdout } = await run(
      TSX,
      [
        'tools/eval/locomo.ts',
        '--data',
        join(dir, 'data.json'),
        '--qrels',
        join(dir, 'qrels.jsonl'),
        '--json',
        '--dump',
        dump,
        '--ablations',
        '--set',
        'timeCueBoost=0.3',
      ],
      { env: childEnv({}), timeout: 120_000 },
    );
    const questions = JSON.parse(await readFile(dump, 'utf8')) as {
      question: string;
      category: number;
      evidence: string[];
      ranked: { turns: string[]; score: number; score_details: Record<string, number> }[];
    }[];
    expect(questions.map((q) => q.question)).toEqual(qrels.slice(0, 3).map((q) => q.question));
    expect(questions[1]?.evidence).toEqual(['D1:2', 'D2:1']);
    // Every stored turn comes back (five memories, limit 20), ranked, with the parts of its score.
    expect(questions[0]?.ranked.flatMap((r) => r.turns).sort()).toEqual(['D1:1', 'D1:2', 'D1:3', 'D2:1', 'D2:2']);
    expect(Object.keys(questions[0]?.ranked[0]?.score_details ?? {})).toEqual(
      expect.arrayContaining(['semantic', 'lexical', 'prior']),
    );
    const lines = stdout.trim().split('\n');
    const summary = JSON.parse(lines[lines.length - 1] ?? '');
    expect(Object.keys(summary.ablations)).toEqual([
      'nothing',
      'lexical share of the turn before',
      'session lexical score',
      'window vectors',
      'concepts',
      "neighbours' similarity",
      "session's similarity",
      'speaker field',
      'time cue',
      'length prior',
    ]);
    expect(summary.ablations.nothing['recall@10']).toBe(summary['recall@10']);
    expect(stdout).toMatch(/\| time cue +\| +\d\.\d{3} \|/);
  });

  it('refuses a --set that names no constant of the ranking', async () => {
    const args = ['--data', join(dir, 'data.json'), '--qrels', join(dir, 'qrels.jsonl'), '--set', 'nonsense=1'];
    const failed = await run(TSX, ['tools/eval/locomo.ts', ...args], { env: childEnv({}) }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: 2, stderr: expect.stringMatching(/--set nonsense=1: not NAME=NUMBER/) });
  });

  it('refuses to run without its files, saying how to call it', async () => {
    const failed = await run(TSX, ['tools/eval/locomo.ts'], { env: childEnv({}) }).catch((e: unknown) => e);
    expect(failed).toMatchObject({ code: 2, stderr: expect.stringMatching(/--data and --qrels are required/) });
  });
});
