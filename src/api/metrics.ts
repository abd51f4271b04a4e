import type { NextFunction, Request, Response } from 'express';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Tier } from '../domain/entry.js';
import type { TierReport } from '../retrieval/retrieve.js';
import type { JobEvent } from '../../queues/observe.js';
import type { JobQueue } from '../../queues/queue.js';
import type { BackendReports } from '../backends.js';
import type { AutoCompactor } from '../compaction/auto.js';
import type { ConversationCompactor } from '../compaction/compactor.js';
import type { ServiceEvents } from '../events.js';
import type { TurnLog } from '../ports/turn-log.js';

const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** a route label for requests no route matched, so that random paths cannot grow the label set */
const UNMATCHED = '(unmatched)';

/** What the metrics read at scrape time and listen to. */
export interface MetricsDeps {
  queue: Pick<JobQueue, 'counts'>;
  turnLog: Pick<TurnLog, 'counts'>;
  autoCompaction: Pick<AutoCompactor, 'counters'>;
  compactor: Pick<ConversationCompactor, 'counters'>;
  events: ServiceEvents;
  backends(): BackendReports;
}

/**
 * The Prometheus metrics of one app, on a registry of its own (never prom-client's global one), so two
 * apps in one process — as in the tests — count separately. Retrieval tiers and job runs arrive through
 * `services.events`; queue depths, turn-log backlog and backend states are read at scrape time.
 */
export class ApiMetrics {
  readonly registry = new Registry();
  private readonly http: Histogram<'method' | 'route' | 'status'>;
  private readonly tier: Histogram<'tier' | 'status'>;
  private readonly jobs: Histogram<'queue' | 'outcome'>;
  private readonly jobFailures: Counter<'queue'>;
  private readonly unsubscribe: () => void;

  constructor(services: MetricsDeps, options: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    if (options.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'neuralcleave_' });

    this.http = new Histogram({
      name: 'neuralcleave_http_request_duration_seconds',
      help: 'HTTP request latency by route pattern and status',
      labelNames: ['method', 'route', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.tier = new Histogram({
      name: 'neuralcleave_retrieve_tier_duration_seconds',
      help: 'time each tier took in a retrieval pass, by outcome (ok, timeout, error, skipped)',
      labelNames: ['tier', 'status'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.jobs = new Histogram({
      name: 'neuralcleave_job_duration_seconds',
      help: 'processor run time in this process, by queue and outcome',
      labelNames: ['queue', 'outcome'],
      buckets: LATENCY_BUCKETS,
      registers,
    });
    this.jobFailures = new Counter({
      name: 'neuralcleave_job_failures_total',
      help: 'failed processor runs in this process (each attempt counts)',
      labelNames: ['queue'],
      registers,
    });

    new Gauge({
      name: 'neuralcleave_queue_jobs',
      help: 'jobs per queue and state (waiting, active, delayed, failed)',
      labelNames: ['queue', 'state'],
      registers,
      async collect() {
        this.reset();
        const counts = await services.queue.counts().catch(() => null);
        if (!counts) return;
        for (const [queue, c] of Object.entries(counts)) {
          for (const state of ['waiting', 'active', 'delayed', 'failed'] as const) this.set({ queue, state }, c[state]);
        }
      },
    });
    new Gauge({
      name: 'neuralcleave_turn_log_pending',
      help: 'accepted turns whose embed or persist job has not completed',
      labelNames: ['job'],
      registers,
      async collect() {
        const c = await services.turnLog.counts();
        this.set({ job: 'embed' }, c.pending_embed);
        this.set({ job: 'persist' }, c.pending_persist);
      },
    });
    new Gauge({
      name: 'neuralcleave_backend_fallback',
      help: '1 when a part runs on its embedded fallback instead of the configured service',
      labelNames: ['part', 'backend'],
      registers,
      collect() {
        this.reset();
        for (const [part, b] of Object.entries(services.backends())) this.set({ part, backend: b.backend }, b.state === 'fallback' ? 1 : 0);
      },
    });
    new Gauge({
      name: 'neuralcleave_backend_up',
      help: '1 when a part answers on its current backend (ok or fallback), 0 when down, loading or failed',
      labelNames: ['part', 'backend'],
      registers,
      collect() {
        this.reset();
        for (const [part, b] of Object.entries(services.backends())) this.set({ part, backend: b.backend }, b.state === 'ok' || b.state === 'fallback' ? 1 : 0);
      },
    });

    new Gauge({
      name: 'neuralcleave_compaction',
      help: 'compaction in this process: auto checks, jobs enqueued, in flight, failures; compactor runs, compacted, skipped, failures',
      labelNames: ['part', 'counter'],
      registers,
      collect() {
        this.reset();
        for (const [counter, n] of Object.entries(services.autoCompaction.counters())) this.set({ part: 'auto', counter }, n);
        for (const [counter, n] of Object.entries(services.compactor.counters())) this.set({ part: 'compactor', counter }, n);
      },
    });

    const onTier = (tier: Tier, r: TierReport) => this.tier.observe({ tier, status: r.status }, r.ms / 1000);
    const onJob = (e: JobEvent) => {
      this.jobs.observe({ queue: e.queue, outcome: e.ok ? 'completed' : 'failed' }, e.ms / 1000);
      if (!e.ok) this.jobFailures.inc({ queue: e.queue });
    };
    services.events.tier.add(onTier);
    services.events.job.add(onJob);
    this.unsubscribe = () => {
      services.events.tier.delete(onTier);
      services.events.job.delete(onJob);
    };
  }

  /** Times every request; the label is the matched route pattern, never the raw path. */
  middleware() {
    return (req: Request, res: Response, next: NextFunction): void => {
      const end = this.http.startTimer();
      res.once('finish', () => {
        const route = req.route?.path;
        end({ method: req.method, route: typeof route === 'string' ? route : UNMATCHED, status: String(res.statusCode) });
      });
      next();
    };
  }

  /** Times a request answered outside Express (src/api/hot-routes.ts), labelled as `middleware` does. */
  observeRequest(method: string, route: string, status: number, seconds: number): void {
    this.http.observe({ method, route, status: String(status) }, seconds);
  }

  async render(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  /** stops listening to the services (the app is being discarded) */
  close(): void {
    this.unsubscribe();
  }
}
