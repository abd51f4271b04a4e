import { createServer, type Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Config } from '../config/schema.js';
import { ConfigError } from '../errors.js';
import { createApi, type ApiDeps } from './app.js';
import { arriving } from '../pace.js';
import type { ConnectionShare } from '../cluster/connections.js';

const LOOPBACK = /^(127\.\d+\.\d+\.\d+|localhost|::1|\[::1\])$/;

/** Refuses to expose unauthenticated memory beyond this machine (docs/architecture.md, HTTP and security). */
export function assertSafeBind(config: Config): void {
  if (!LOOPBACK.test(config.host) && config.api_keys.length === 0) {
    throw new ConfigError(`refusing to bind ${config.host} with no api_keys: set api_keys, or bind 127.0.0.1`, [
      { path: 'host', message: 'a non-loopback address needs api_keys' },
    ]);
  }
}

/**
 * `connections`: an HTTP process of `serve --processes N` keeps its share of the keep-alive connections
 * (src/cluster/connections.ts): a response it gives while holding more says `Connection: close`.
 */
export async function startServer(deps: ApiDeps, connections?: ConnectionShare): Promise<Server> {
  const { config } = deps.services;
  assertSafeBind(config);
  const api = createApi(deps);
  const server = createServer();
  // long jobs of this process pause for a request not read yet too (src/pace.ts): until a new
  // connection's first request is read (or it ends)
  const unread = new WeakMap<Socket, () => void>();
  server.on('connection', (socket: Socket) => {
    const read = arriving();
    unread.set(socket, read);
    socket.once('close', read);
  });
  server.on('request', (req) => unread.get(req.socket)?.());
  if (connections) {
    server.on('connection', (socket) => connections.opened(socket));
    // before the API's listener, which may answer at once
    server.on('request', (req, res) => {
      if (connections.shouldClose(req.socket)) res.shouldKeepAlive = false;
    });
  }
  server.on('request', api.listener);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve(server));
    server.once('close', () => api.close());
  });
}
