import { api } from '../api.js';
import type { ViewContext } from '../context.js';
import { badge, errorBox, h, loading, replace, toast, when } from '../dom.js';
import type { FailedJob, Health } from '../types.js';

const PART_LABEL: Record<string, string> = {
  short_term: 'Short-term tier',
  semantic: 'Semantic tier',
  long_term: 'Long-term tier',
  queue: 'Queue',
  embedder: 'Embedder',
};
const STATE_KIND: Record<string, string> = { ok: 'on', fallback: 'warn', loading: 'warn', degraded: 'warn', down: 'bad', failed: 'bad' };
const stateBadge = (state: string) => badge(state, STATE_KIND[state] ?? 'unknown');

async function openBoard(): Promise<void> {
  try {
    const { path } = await api.post<{ path: string }>('/inspect/queue-board/session', {});
    window.open(path.replace(/^\//, './'), '_blank', 'noopener');
  } catch (err) {
    toast(`Could not open the queue dashboard: ${(err as Error).message}`, 'error');
  }
}

/** #/status: each tier's backend and health, queue depths and failed jobs at a glance. */
export async function statusView(ctx: ViewContext, el: HTMLElement): Promise<void> {
  replace(el, h('h1', {}, 'Status'), loading());
  const [health, failed] = await Promise.all([
    api.health<Health>(),
    api.get<{ jobs: FailedJob[]; queue_backend: string }>('/inspect/jobs/failed', { limit: 50 }).catch((err: unknown) => err as Error),
  ]);

  const backends = h(
    'table',
    { class: 'grid', 'data-testid': 'backends' },
    h('thead', {}, h('tr', {}, h('th', {}, 'Part'), h('th', {}, 'Backend'), h('th', {}, 'State'), h('th', {}, 'Detail'))),
    h(
      'tbody',
      {},
      ...Object.entries(health.backends).map(([part, b]) =>
        h('tr', { 'data-part': part }, h('td', {}, PART_LABEL[part] ?? part), h('td', { class: 'mono' }, b.backend), h('td', {}, stateBadge(b.state)), h('td', { class: 'muted small' }, b.detail ?? '')),
      ),
    ),
  );

  const queueNames = Object.keys(health.queues);
  const queues =
    queueNames.length === 0
      ? h('p', { class: 'error' }, 'The queue did not answer.')
      : h(
          'table',
          { class: 'grid', 'data-testid': 'queues' },
          h('thead', {}, h('tr', {}, h('th', {}, 'Queue'), ...['waiting', 'active', 'delayed', 'failed', 'completed'].map((s) => h('th', { class: 'num' }, s)))),
          h(
            'tbody',
            {},
            ...queueNames.map((q) => {
              const c = health.queues[q]!;
              return h(
                'tr',
                { 'data-queue': q },
                h('td', {}, q),
                h('td', { class: 'num' }, c.waiting),
                h('td', { class: 'num' }, c.active),
                h('td', { class: 'num' }, c.delayed),
                h('td', { class: c.failed > 0 ? 'num bad' : 'num' }, c.failed),
                h('td', { class: 'num muted' }, c.completed),
              );
            }),
          ),
        );

  const failedBlock =
    failed instanceof Error
      ? errorBox(failed)
      : failed.jobs.length === 0
        ? h('p', { class: 'muted empty' }, 'No failed jobs.')
        : h(
            'table',
            { class: 'grid', 'data-testid': 'failed-jobs' },
            h('thead', {}, h('tr', {}, h('th', {}, 'Queue'), h('th', {}, 'Job'), h('th', {}, 'User'), h('th', { class: 'num' }, 'Attempts'), h('th', {}, 'Failed'), h('th', {}, 'Reason'))),
            h(
              'tbody',
              {},
              ...failed.jobs.map((j) =>
                h('tr', {}, h('td', {}, j.queue), h('td', { class: 'mono small' }, j.jobId), h('td', {}, j.user_id ?? '—'), h('td', { class: 'num' }, j.attempts), h('td', {}, when(j.failedAt)), h('td', { class: 'small' }, j.reason)),
              ),
            ),
          );

  const embedder = health.embedder;
  const backlog = health.turn_log;
  replace(
    el,
    h('h1', {}, 'Status ', badge(health.status, STATE_KIND[health.status] ?? 'unknown')),
    h('h2', {}, 'Tiers and backends'),
    backends,
    h(
      'p',
      { class: 'muted small' },
      `Embedder ${embedder.model} (${embedder.status}${embedder.dim ? `, ${embedder.dim} dimensions` : ''})`,
      health.sqlite_path ? ` · SQLite ${health.sqlite_path}` : '',
      health.database_url ? ` · PostgreSQL ${health.database_url}` : '',
    ),
    h('h2', {}, 'Queues ', ctx.who.queue_board ? h('button', { type: 'button', class: 'small', onclick: () => void openBoard() }, 'Open the queue dashboard') : null),
    queues,
    backlog ? h('p', { class: 'muted small' }, `Turn log: ${backlog.total} turns; ${backlog.pending_embed} waiting to be embedded, ${backlog.pending_persist} waiting to be persisted.`) : null,
    h('h2', {}, 'Failed jobs'),
    ctx.who.queue_backend === 'in-process' ? h('p', { class: 'muted small' }, 'No Redis: the queue runs in this process, so these are the jobs that failed here since it started.') : null,
    failedBlock,
  );
}
