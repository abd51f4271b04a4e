import { createHash } from 'node:crypto';
import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * The one root logger. Logs go to stderr so that `--json` output on stdout stays clean; components
 * take `logger.child({component})`.
 */
export function createLogger(level: string, destination: number = 2): Logger {
  return pino(options(level), pino.destination({ dest: destination, sync: true }));
}

function options(level: string): pino.LoggerOptions {
  return {
    level,
    base: { pid: process.pid },
    redact: { paths: ['req.headers.authorization', 'authorization', '*.api_key', '*.key', '*.embedding_api_key', '*.llm_api_key', '*.qdrant_api_key'], censor: '[redacted]' },
  };
}

const LEVEL_NAMES: Record<number, string> = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warning', 50: 'error', 60: 'fatal' };
const NOT_SHOWN = new Set(['level', 'time', 'pid', 'msg', 'component']);

/**
 * The logger of a one-shot CLI command: the same records, printed for a person on stderr —
 * `neuralcleave: warning: <message> (key=value, …)` — so they read like the command's own lines
 * instead of JSON between them. Services (`serve`, `worker`) keep JSON lines for log collectors.
 */
export function createCliLogger(level: string): Logger {
  const human = {
    write(line: string): void {
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(line) as Record<string, unknown>;
      } catch {
        process.stderr.write(line);
        return;
      }
      const fields = Object.entries(record)
        .filter(([k]) => !NOT_SHOWN.has(k))
        .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
      const level = LEVEL_NAMES[record.level as number] ?? 'log';
      process.stderr.write(`neuralcleave: ${level}: ${String(record.msg ?? '')}${fields.length > 0 ? ` (${fields.join(', ')})` : ''}\n`);
    },
  };
  return pino(options(level), human);
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
