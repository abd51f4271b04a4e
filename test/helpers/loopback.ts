import { createConnection, createServer, type Server, type Socket } from 'node:net';
import { after, before } from 'node:test';

/**
 * Two ends of a TCP connection on 127.0.0.1. `send()` writes a byte from the client end: it is in the
 * kernel when send returns, and the event loop reads it at its next poll, which `read` resolves at.
 * What a turn of the loop must let in (a probe's /health) is such a read.
 */
export interface Loopback {
  send(): void;
  /** resolves when the server end has read what the last send() wrote */
  read(): Promise<void>;
  close(): Promise<void>;
}

export async function loopback(): Promise<Loopback> {
  const server: Server = createServer();
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const client = createConnection(port, '127.0.0.1');
  await new Promise<void>((resolve) => client.once('connect', resolve));
  const end = await accepted;
  let waiting: Array<() => void> = [];
  end.on('data', () => {
    const resolved = waiting;
    waiting = [];
    for (const r of resolved) r();
  });
  return {
    send: () => void client.write('x'),
    read: () => new Promise<void>((resolve) => waiting.push(resolve)),
    close: async () => {
      client.destroy();
      end.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * Two loopbacks for a suite (node:test hooks: opened before its tests, closed after them): `start`,
 * whose read puts a test's step where the event loop reads connections, and `probe`, what a turn must
 * let in.
 */
export function loopbackPair(): { readonly start: Loopback; readonly probe: Loopback } {
  const pair = {} as { start: Loopback; probe: Loopback };
  before(async () => {
    [pair.start, pair.probe] = [await loopback(), await loopback()];
  });
  after(async () => {
    await pair.start.close();
    await pair.probe.close();
  });
  return pair;
}
