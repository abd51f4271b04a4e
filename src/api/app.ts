import express, { type Express } from 'express';
import type { Services } from '../app.js';
import { healthReport } from '../health.js';
import type { Memory } from '../memory/memory.js';

export interface ApiDeps {
  memory: Memory;
  services: Services;
}

/** Builds the HTTP API from its dependencies; nothing global, so tests build as many as they like. */
export function createApp(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.get('/health', async (_req, res) => {
    res.json(await healthReport(deps.services));
  });
  return app;
}
