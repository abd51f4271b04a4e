import { createServer, connect, type Server, type Socket } from 'node:net';

/**
 * A TCP proxy on a free local port to `target` (host:port), which a test can take down and bring
 * back on the same port: what a client sees of a database server that goes away and returns, without
 * stopping the shared server.
 */
export interface TcpProxy {
  port: number;
  /** refuses new connections and cuts every open one */
  stop(): Promise<void>;
  /** accepts connections again, on the same port */
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function tcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const open = new Set<Socket>();
  let server: Server | null = null;
  let port = 0;
  const listen = () =>
    new Promise<void>((resolve, reject) => {
      const s = createServer((client) => {
        const upstream = connect(targetPort, targetHost);
        open.add(client).add(upstream);
        const drop = () => {
          client.destroy();
          upstream.destroy();
          open.delete(client);
          open.delete(upstream);
        };
        client.on('error', drop).on('close', drop);
        upstream.on('error', drop).on('close', drop);
        client.pipe(upstream).pipe(client);
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as { port: number }).port;
        server = s;
        resolve();
      });
    });
  const stop = async () => {
    const s = server;
    server = null;
    for (const sock of open) sock.destroy();
    open.clear();
    if (s) await new Promise<void>((resolve) => s.close(() => resolve()));
  };
  await listen();
  return { port, stop, start: listen, close: stop };
}
