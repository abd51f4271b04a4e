import { createServer, type Server } from 'node:http';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { createApi, type ApiDeps } from './app.js';
import { arriving } from '../pace.js';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$/;

/** Refuses to expose unauthenticated memory beyond this machine (docs/architecture.md, HTTP and security). */
export function assertSafeBind(config: Config): void {
  if (!LOOPBACK.test(config.host) && config.api_keys.length === 0) {
    throw new ConfigError(`refusing to bind ${config.host} with no api_keys: set api_keys, or bind 127.0.0.1`, [
      { path: 'host', message: 'a non-loopback address needs api_keys' },
    ]);
  }
}

export async function startServer(deps: ApiDeps): Promise<Server> {
  const { config } = deps.services;
  assertSafeBind(config);
  const api = createApi(deps);
  const server = createServer(api.listener);
  // long jobs of this process pause for a request not read yet too (src/pace.ts)
  server.on('connection', arriving);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve(server));
    server.once('close', () => api.close());
  });
}
