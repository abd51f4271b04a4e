import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, test } from 'node:test';
import type { Command } from 'commander';
import { buildProgram } from '../../src/cli/program.js';
import { CONFIG_KEYS, ConfigSchema } from '../../src/config/schema.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const README = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** The rows of the markdown table whose header row starts with `| <first> |`. */
function table(first: string): string[][] {
  const lines = README.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`| ${first} |`));
  assert.ok(start >= 0, `a table headed "${first}"`);
  const rows: string[][] = [];
  for (const l of lines.slice(start + 2)) {
    if (!l.startsWith('|')) break;
    // split on the cell bars, not on `\|` inside a cell
    rows.push(l.slice(1, -1).split(/(?<!\\)\|/).map((c) => c.trim()));
  }
  return rows;
}

/** The command a line of words names (`memory list …`), or null when one of its words is not a command. */
function findCommand(program: Command, words: string[]): Command | null {
  let at = program;
  for (const w of words) {
    const next = at.commands.find((c) => c.name() === w || c.aliases().includes(w));
    if (!next) return at === program ? null : at;
    at = next;
  }
  return at;
}

function assertCommand(program: Command, text: string): void {
  const words = text.split(/\s+/).filter((w) => /^[a-z][a-z-]*$/.test(w));
  const command = findCommand(program, words);
  assert.ok(command && command !== program, `"${text}" names a command`);
  const flags = new Set(command.options.flatMap((o) => [o.long, o.short]).concat(program.options.flatMap((o) => [o.long, o.short])).filter(Boolean));
  for (const flag of text.match(/(?<![\w-])--?[a-zA-Z][\w-]*/g) ?? []) assert.ok(flags.has(flag), `"${text}": ${command.name()} has ${flag}`);
}

describe("the README's commands and keys are true", () => {
  test('it stays short enough to read top to bottom', () => {
    assert.ok(README.split('\n').length <= 360, `${README.split('\n').length} lines`);
  });

  test('every file it links to exists', () => {
    const links = [...README.matchAll(/\]\(((?:docs|src)\/[^)#]+)\)/g)].map((m) => m[1]!);
    assert.ok(links.length >= 5);
    for (const l of links) assert.ok(existsSync(join(ROOT, l)), `${l} exists`);
  });

  test('every config key it documents is in the schema, with the schema default', () => {
    const defaults = ConfigSchema.parse({}) as Record<string, unknown>;
    const rows = table('key');
    assert.ok(rows.length >= 10);
    for (const [cell, value] of rows) {
      const key = /^`(\w+)`$/.exec(cell!)?.[1];
      assert.ok(key && (CONFIG_KEYS as string[]).includes(key), `${cell} is a config key`);
      const documented = value!.replace(/`/g, '');
      const actual = defaults[key];
      assert.equal(documented, actual === undefined ? 'unset' : typeof actual === 'object' ? JSON.stringify(actual) : String(actual), `${key}'s default`);
    }
  });

  test('every command of the CLI table exists, with the options it shows', () => {
    const program = buildProgram();
    const rows = table('command');
    assert.ok(rows.length >= 10);
    for (const [cell] of rows) for (const part of cell!.split(' · ')) assertCommand(program, part.replace(/`/g, '').replace(/\\\|/g, ' '));
  });

  test('every `npx neuralcleave …` line in its examples is a command with those options', () => {
    const program = buildProgram();
    const lines = [...README.matchAll(/^npx neuralcleave (.+?)(?:\s+#.*)?$/gm)].map((m) => m[1]!.replace(/"[^"]*"|'[^']*'/g, ' '));
    assert.ok(lines.length >= 4);
    for (const l of lines) assertCommand(program, l.replace(/\S+\.jsonl/g, ' '));
  });
});
