import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * A web dashboard of the job queues, served under a path the edge chose (the BullMQ board at
 * /admin/queues). The edge authenticates and sets the page's headers; the dashboard only serves.
 *
 * Contract: `handle` serves the dashboard's pages and API for a request under its base path, calling
 * `next` (with the error, when one occurred) for anything it does not serve; it opens its connections
 * on first use. `close` releases them; a closed dashboard is not used again. Not covered: access
 * control, and the in-process queue (which has no dashboard: the inspector shows its jobs).
 */
export interface QueueDashboard {
  handle(req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void): void;
  close(): Promise<void>;
}
