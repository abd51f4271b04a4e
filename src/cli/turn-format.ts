import type { z } from 'zod';
import { TURN_EXAMPLE, type TurnInputSchema } from '../domain/turn.js';

/**
 * The turn format as `ingest --help` prints it, read from the schema the write path validates with:
 * each field, whether it is required, and what it means; then an example line.
 */
export function turnFormatHelp(schema: TurnInputSchema): string {
  const fields = Object.entries(schema.shape) as Array<[string, z.ZodType]>;
  const width = Math.max(...fields.map(([k]) => k.length));
  const lines = fields.map(([name, field]) => {
    const required = !field.safeParse(undefined).success;
    return `  ${name.padEnd(width)}  ${required ? 'required' : 'optional'}  ${field.description ?? ''}`;
  });
  return ['', 'Each line of <file> is one JSON turn:', ...lines, '', 'Example line:', `  ${TURN_EXAMPLE}`, ''].join('\n');
}
