import type { Services } from './app.js';

/** What `/health` and `doctor` report: liveness, each part's backend and state, queue depths. */
export async function healthReport(s: Services) {
  const [queues, shortTermUp, vectorsUp] = await Promise.all([
    s.queue.counts().catch(() => null),
    s.shortTerm.ping().catch(() => false),
    s.vectors.ping().catch(() => false),
  ]);
  const backends = s.backends();
  if (!shortTermUp) backends.short_term = { ...backends.short_term, state: 'down' };
  if (!vectorsUp) backends.semantic = { ...backends.semantic, state: 'down' };
  const degraded = Object.values(backends).some((b) => b.state !== 'ok');
  return {
    status: degraded ? ('degraded' as const) : ('ok' as const),
    backends,
    sqlite_path: s.config.sqlite_path,
    queues: queues ?? ({} as Partial<NonNullable<typeof queues>>),
    turn_log: s.turnLog.counts(),
  };
}
