import type { Tier } from './domain/entry.js';

/** Which backend serves each part, and why: what `doctor` and `/health` report. */
export interface BackendReport {
  backend: string;
  /** 'ok', or 'fallback' when the configured service could not be used */
  state: 'ok' | 'fallback' | 'down' | 'loading' | 'failed';
  detail?: string;
}

export type BackendReports = Record<Tier | 'queue' | 'embedder', BackendReport>;
