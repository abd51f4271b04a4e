/** The queues of the write path (docs/architecture.md, deployment and backends). */
export const QUEUE_NAMES = ['embed', 'persist', 'compact', 'archive'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

/** Queues that write the SQLite file, and so must be consumed on the host that holds it. */
export const SQLITE_QUEUES: readonly QueueName[] = ['persist', 'compact', 'archive'];
