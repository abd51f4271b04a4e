import { createHash } from 'node:crypto';
import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * The one root logger. Logs go to stderr so that `--json` output on stdout stays clean; components
 * take `logger.child({component})`.
 */
export function createLogger(level: string, destination: number = 2): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid },
      redact: { paths: ['req.headers.authorization', 'authorization', '*.api_key', '*.key'], censor: '[redacted]' },
    },
    pino.destination({ dest: destination, sync: true }),
  );
}

/** Logs a warning once per key for this logger's lifetime (fallback notices, skipped tiers). */
export function warnOnce(logger: Logger, key: string, obj: object, msg: string): void {
  const seen = ((logger as unknown as { __warned?: Set<string> }).__warned ??= new Set<string>());
  if (seen.has(key)) return;
  seen.add(key);
  logger.warn(obj, msg);
}

/**
 * What a log line may say about whose data it concerns: a short digest of the user (and session) id,
 * never the ids themselves — logs outlive an erasure (`memory forget`), so they hold no user ids,
 * session ids or user text at any level. Equal ids give equal digests, so lines still correlate.
 */
export function subjectOf(userId: string, sessionId?: string): string {
  return createHash('sha256').update(sessionId === undefined ? userId : `${userId}\u0000${sessionId}`).digest('base64url').slice(0, 12);
}
