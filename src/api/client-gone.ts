import type { ServerResponse } from 'node:http';
import { RequestAbortedError } from '../errors.js';

/**
 * A signal that aborts when the client closes its connection before its answer is finished (the
 * response's 'close' before its 'finish'), with a `RequestAbortedError`: the work done for the request
 * (a retrieval pass, a chat turn's retrieval and LLM call) stops, since nobody will read its answer.
 */
export function whileClientWaits(res: ServerResponse): AbortSignal {
  const gone = new AbortController();
  res.once('close', () => {
    if (!res.writableFinished) gone.abort(new RequestAbortedError('the client closed its connection before the answer: the work for it stopped'));
  });
  return gone.signal;
}

/** what is logged of a request whose client left: its route (from the request logger's fields) and that the client left, no user text */
export const CLIENT_LEFT = { fields: { client_left: true }, message: 'the client left before the answer; the work for it stopped' } as const;
