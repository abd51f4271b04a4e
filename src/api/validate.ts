import type { z } from 'zod';
import { ValidationError, describeDetails, zodDetails } from '../errors.js';
import type { Principal } from './auth.js';
import { defaultUserOf } from './auth.js';

/** what was parsed, as the error message names it (`arguments`: an MCP tool call's) */
export type RequestPart = 'path' | 'query string' | 'body' | 'arguments';

/** Parses one part of a request; a failure is a 400 whose details name each failing field. */
export function parseRequest<S extends z.ZodType>(schema: S, value: unknown, part: RequestPart): z.infer<S> {
  if (part === 'body' && value === undefined) {
    throw new ValidationError('a JSON body is required (Content-Type: application/json)', [{ path: '(root)', message: 'missing body' }]);
  }
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  // an unknown key is named as the failing field itself, not as its parent object
  const issues = parsed.error.issues.flatMap((i) =>
    i.code === 'unrecognized_keys' ? i.keys.map((k) => ({ path: [...i.path, k], message: 'unknown field' })) : [i],
  );
  const details = zodDetails(issues);
  throw new ValidationError(`invalid ${part}: ${describeDetails(details)}`, details);
}

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A body that names no user acts for the principal's default user; anything else is left to the schema. */
export function withDefaultUser(body: unknown, principal: Principal): unknown {
  if (!isPlainObject(body) || Object.hasOwn(body, 'user_id')) return body;
  return { ...body, user_id: defaultUserOf(principal) };
}
