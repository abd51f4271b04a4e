import type { z } from 'zod';
import { ValidationError, describeDetails, zodDetails } from './errors.js';

/** Parses at an edge; a failure becomes a ValidationError naming each failing field. */
export function parseOrThrow<S extends z.ZodType>(schema: S, value: unknown, what = 'request'): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const details = zodDetails(parsed.error.issues);
  throw new ValidationError(`invalid ${what}: ${describeDetails(details)}`, details);
}
