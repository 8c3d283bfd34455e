import { beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { CircuitOpen, createLlmBreaker, llmBreakerFor, type LlmBreaker } from '../../src/llm/breaker.js';
import { capturedLog } from '../helpers/captured-log.js';

const { log, lines: logLines } = capturedLog();
const events = () => logLines.map((l) => (JSON.parse(l) as { event?: string }).event);

let now = 0;
const breaker = (failures = 3): LlmBreaker => createLlmBreaker({ failures, cooldownMs: 30_000, log, now: () => now });
const fail = (b: LlmBreaker, signal?: AbortSignal) =>
  b.run('judge', () => Promise.reject(new Error('500')), signal).catch((e: unknown) => e);
const succeed = (b: LlmBreaker) => b.run('extract', () => Promise.resolve('ok'));

beforeEach(() => {
  now = 0;
  logLines.length = 0;
});

describe('the model circuit breaker', () => {
  it('opens after three failures in a row, skips calls without making them, and says so once', async () => {
    const b = breaker();
    await fail(b);
    await fail(b);
    await succeed(b);
    await fail(b);
    await fail(b);
    expect(b.isOpen()).toBe(false);
    await fail(b);
    expect(b.isOpen()).toBe(true);
    let called = false;
    const skipped = await b
      .run('extract', () => {
        called = true;
        return Promise.resolve('ok');
      })
      .catch((e: unknown) => e);
    expect(skipped).toBeInstanceOf(CircuitOpen);
    expect(called).toBe(false);
    expect(await fail(b)).toBeInstanceOf(CircuitOpen);
    expect(b.counts('judge')).toEqual({ calls: 5, failures: 5, skipped: 1, fallbacks: 0 });
    expect(b.counts('extract')).toEqual({ calls: 1, failures: 0, skipped: 1, fallbacks: 0 });
    expect(events()).toEqual(['llm_circuit_open']);
  });

  it('after the cool-down lets one trial through; its success closes the circuit', async () => {
    const b = breaker();
    for (let i = 0; i < 3; i++) await fail(b);
    now += 29_999;
    expect(await succeed(b).catch((e: unknown) => e)).toBeInstanceOf(CircuitOpen);
    now += 1;
    let release: (value: string) => void = () => undefined;
    const trial = b.run('judge', () => new Promise<string>((resolve) => (release = resolve)));
    // Only one trial at a time.
    expect(await succeed(b).catch((e: unknown) => e)).toBeInstanceOf(CircuitOpen);
    release('ok');
    expect(await trial).toBe('ok');
    expect(b.isOpen()).toBe(false);
    expect(await succeed(b)).toBe('ok');
    expect(events()).toEqual(['llm_circuit_open', 'llm_circuit_closed']);
  });

  it('a failed trial opens it again for another cool-down, and says so again', async () => {
    const b = breaker();
    for (let i = 0; i < 3; i++) await fail(b);
    now += 30_000;
    expect(await fail(b)).toBeInstanceOf(Error);
    expect(b.isOpen()).toBe(true);
    now += 29_999;
    expect(await fail(b)).toBeInstanceOf(CircuitOpen);
    expect(events()).toEqual(['llm_circuit_open', 'llm_circuit_open']);
  });

  it("does not count the caller's own abort as a failure of the model", async () => {
    const b = breaker(1);
    const stop = new AbortController();
    stop.abort();
    await fail(b, stop.signal);
    expect(b.isOpen()).toBe(false);
    expect(b.counts('judge').failures).toBe(0);
  });

  it('never opens with 0 failures configured', async () => {
    const b = breaker(0);
    for (let i = 0; i < 10; i++) await fail(b);
    expect(b.isOpen()).toBe(false);
  });

  it('is configured by LLM_BREAKER_FAILURES and LLM_BREAKER_COOLDOWN_MS, and exists only with a key', () => {
    expect(loadConfig({}).llmBreaker).toEqual({ failures: 3, cooldownMs: 30000 });
    expect(loadConfig({ LLM_BREAKER_FAILURES: '5', LLM_BREAKER_COOLDOWN_MS: '1000' }).llmBreaker).toEqual({
      failures: 5,
      cooldownMs: 1000,
    });
    expect(() => loadConfig({ LLM_BREAKER_FAILURES: '-1' })).toThrow(/LLM_BREAKER_FAILURES/);
    expect(() => loadConfig({ LLM_BREAKER_COOLDOWN_MS: '0' })).toThrow(/LLM_BREAKER_COOLDOWN_MS/);
    expect(llmBreakerFor(loadConfig({}), log)).toBeUndefined();
    expect(llmBreakerFor(loadConfig({ ANTHROPIC_API_KEY: 'sk-ant-test' }), log)).toBeDefined();
  });
});
