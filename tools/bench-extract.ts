/**
 * How fast the deterministic extractor reads a 500-message conversation, and (with --ingest) how long
 * a whole ingest of it takes through the domain core: extraction, one embedding call, the store path.
 *   npm run bench:extract -- [--messages 500] [--runs 50] [--ingest] [--embedder hash|local]
 * The ingest uses an in-memory embedded database unless DATABASE_URL is set (then a throwaway tenant).
 */
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { loadConfig } from '../src/config.js';
import type { Actor } from '../src/domain/core.js';
import { ingestConversation } from '../src/domain/store/ingest.js';
import { createTenant } from '../src/domain/tenancy/tenants.js';
import type { ConversationMessage } from '../src/extraction/extractor.js';
import { createHeuristicExtractor } from '../src/extraction/heuristic.js';
import { startCore } from '../src/start-core.js';

const { values } = parseArgs({
  options: {
    messages: { type: 'string', default: '500' },
    runs: { type: 'string', default: '50' },
    ingest: { type: 'boolean', default: false },
    embedder: { type: 'string', default: 'hash' },
  },
});
const count = Number(values.messages);
const runs = Number(values.runs);

const CITIES = ['Lisbon', 'Oslo', 'Austin', 'Denver', 'Kyoto', 'Porto', 'Lyon', 'Cork'];
const THINGS = ['jazz', 'chess', 'sushi', 'gardening', 'cycling', 'board games', 'poetry', 'tennis'];
// Consistent facts, so that sending the conversation again shows reinforcement, not supersession;
// the varying ones are of many-valued kinds (places visited, likes, allergies).
const USER_TURNS: ((i: number) => string)[] = [
  () => "Hi! I live in Lisbon and I work as a nurse at a children's hospital.",
  (i) => `Can you suggest a recipe? I'm allergic to peanuts and I like ${THINGS[i % THINGS.length]}.`,
  () => 'Thanks, that helps a lot!',
  () => 'My budget is $1,200 and I need something with good battery life.',
  () => "I prefer email over phone calls. Please don't call me before 10am.",
  () => 'What time is it in Tokyo right now?',
  (i) => `I visited ${CITIES[i % CITIES.length]} in ${2000 + (i % 25)} and I loved the food there.`,
  () => 'I love hiking and photography, but I hate crowded places.',
  () => 'ok cool',
  (i) => `My sister plays ${THINGS[(i + 3) % THINGS.length]} every ${i % 2 === 0 ? 'Monday' : 'Friday'} evening.`,
];
const ASSISTANT_TURNS = [
  'Sure! Here is what I found for you; let me know if you need anything else.',
  'That sounds great. Is there anything specific you are looking for?',
  'I understand. I will keep that in mind for our next conversations.',
];

function conversation(n: number): ConversationMessage[] {
  return Array.from({ length: n }, (_, i) =>
    i % 2 === 0
      ? { role: 'user' as const, content: USER_TURNS[(i / 2) % USER_TURNS.length]!(i) }
      : { role: 'assistant' as const, content: ASSISTANT_TURNS[i % ASSISTANT_TURNS.length]! },
  );
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const messages = conversation(count);
const extractor = createHeuristicExtractor();
let facts = 0;
for (let i = 0; i < 5; i++) facts = (await extractor.extract(messages)).length; // warm-up
const times: number[] = [];
for (let i = 0; i < runs; i++) {
  const started = performance.now();
  await extractor.extract(messages);
  times.push(performance.now() - started);
}
times.sort((a, b) => a - b);
const chars = messages.reduce((n, m) => n + m.content.length, 0);
console.log(
  `heuristic extractor: ${count} messages (${chars} characters, ${facts} facts), ${runs} runs: ` +
    `median ${percentile(times, 50).toFixed(2)} ms, p95 ${percentile(times, 95).toFixed(2)} ms, ` +
    `max ${(times[times.length - 1] ?? NaN).toFixed(2)} ms`,
);

if (values.ingest) {
  const config = loadConfig({
    ...process.env,
    DATA_DIR: process.env.DATA_DIR ?? ':memory:',
    EMBEDDER: values.embedder,
    LOG_LEVEL: 'silent',
    // The deterministic extractor and detector: this measures our own work, not a model's latency.
    ANTHROPIC_API_KEY: '',
  });
  const running = await startCore(config, { log: pino({ level: 'silent' }) });
  try {
    const { core } = running;
    const tenant = await createTenant(core, `bench-${Date.now()}`);
    const actor: Actor = { tenantId: tenant.tenantId, keyId: tenant.keyId, scopes: new Set(['write']) };
    for (const [label, subject] of [
      ['first ingest', 'subject-1'],
      ['same conversation again (reinforces)', 'subject-1'],
    ] as const) {
      const started = performance.now();
      const result = await ingestConversation(core, actor, {
        agentId: 'bench',
        messages,
        anchor: { anchorExternalId: subject },
      });
      const ms = performance.now() - started;
      const outcomes = result.memories.reduce<Record<string, number>>(
        (n, m) => ({ ...n, [m.outcome]: (n[m.outcome] ?? 0) + 1 }),
        {},
      );
      console.log(
        `ingest (${running.engine}, ${core.embedder.id}), ${label}: ${ms.toFixed(0)} ms for ${count} messages, ` +
          `${result.memories.length} facts stored ${JSON.stringify(outcomes)}`,
      );
    }
  } finally {
    await running.close();
  }
}
