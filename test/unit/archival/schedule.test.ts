import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { InProcessQueue } from '../../../src/adapters/in-process/queue.js';
import { nextArchival, scheduleArchival } from '../../../src/archival/schedule.js';
import { cronProblem, timezoneProblem } from '../../../src/archival/cron.js';
import { parseConfig } from '../../../src/config/load.js';
import { ConfigError } from '../../../src/errors.js';
import { silentLogger } from '../../helpers/services.js';

describe('archival schedule', () => {
  it('in-process: one job per occurrence, however often the schedule is registered', { timeout: 20_000 }, async () => {
    const queue = new InProcessQueue(silentLogger());
    const runs: Array<{ jobId: string; trigger: string }> = [];
    await queue.consume({ archive: async (data, meta) => void runs.push({ jobId: meta.jobId, trigger: data.trigger }) }, { queues: ['archive'], concurrency: 4 });
    const config = { archival_cron: '* * * * * *', archival_timezone: 'UTC' };
    // serve registers at start; registering again replaces, never adds a second cron
    await scheduleArchival(queue, config, silentLogger());
    await scheduleArchival(queue, config, silentLogger());
    const deadline = Date.now() + 15_000;
    while (runs.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    await queue.close();
    assert.ok(runs.length >= 3, `${runs.length} runs`);
    assert.equal(new Set(runs.map((r) => r.jobId)).size, runs.length, `each occurrence once: ${runs.map((r) => r.jobId).join(', ')}`);
    assert.ok(runs.every((r) => r.trigger === 'schedule'));
  });

  it('validates archival_cron and archival_timezone at start-up, naming the key', () => {
    assert.equal(cronProblem('0 3 * * *'), null);
    assert.equal(cronProblem('*/10 * * * * *'), null, 'six fields: seconds first');
    assert.match(cronProblem('0 3 * *') ?? '', /five|six/);
    assert.notEqual(timezoneProblem('Mars/Olympus'), null);
    assert.throws(() => parseConfig({ archival_cron: '61 3 * * *' }), (e: unknown) => e instanceof ConfigError && /archival_cron/.test(e.message));
    assert.throws(() => parseConfig({ archival_timezone: 'Nowhere/City' }), (e: unknown) => e instanceof ConfigError && /archival_timezone/.test(e.message));
  });

  it('computes the next occurrence in the configured timezone', () => {
    const from = new Date('2026-06-01T12:00:00Z');
    assert.equal(nextArchival({ archival_cron: '0 3 * * *', archival_timezone: 'UTC' }, from)?.toISOString(), '2026-06-02T03:00:00.000Z');
    // 03:00 in Paris in summer is 01:00 UTC
    assert.equal(nextArchival({ archival_cron: '0 3 * * *', archival_timezone: 'Europe/Paris' }, from)?.toISOString(), '2026-06-02T01:00:00.000Z');
  });
});
