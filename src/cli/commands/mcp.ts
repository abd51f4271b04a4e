import type { Command } from 'commander';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { wire } from '../../roots/library.js';
import type { Principal } from '../../api/auth.js';
import { apiSchemas } from '../../api/schemas.js';
import { UserIdSchema } from '../../domain/turn.js';
import { createLogger } from '../../logger.js';
import { createMcpServer } from '../../mcp/server.js';
import { Memory } from '../../memory/memory.js';
import { parseOrThrow } from '../../validate.js';
import { configFrom, type GlobalOptions } from '../context.js';
import { onShutdown } from '../../lifecycle/shutdown.js';

interface McpOptions {
  user?: string[];
}

/**
 * `neuralcleave mcp`: an MCP server on stdin/stdout for an assistant that spawns it (Claude Desktop,
 * Cursor, any MCP client), over the same services as every other command. stdout carries only protocol
 * messages; logs go to stderr. Without a Redis the process runs the workers itself, like `serve`.
 */
export function registerMcp(program: Command, globals: () => GlobalOptions): void {
  program
    .command('mcp')
    .description('a Model Context Protocol server on stdio (tools: add_turns, retrieve, search_memory, get/update/delete_memory, forget_session)')
    .option('--user <id...>', 'act only for these users (one: it is also the default user); without it every user, like the other commands')
    .action(async (opts: McpOptions) => {
      // stdout is the protocol: a library's stray console.log (a model loader, say) would corrupt it
      console.log = console.info = console.debug = console.error.bind(console);
      const config = configFrom(globals());
      const log = createLogger(config.log_level === 'info' ? 'warn' : config.log_level);
      const users = (opts.user ?? []).map((u) => parseOrThrow(UserIdSchema, u, '--user'));
      // a local process that can open the SQLite file could read it whole: --user narrows what the
      // assistant may reach, it is not a security boundary (the HTTP door's API keys are)
      const principal: Principal = users.length > 0 ? { kind: 'key', users: new Set(users), label: '--user', holder: `this MCP server (started with --user ${users.join(' ')})` } : { kind: 'open' };
      const services = await wire(config, { logger: log, scheduleArchival: false });
      const memory = new Memory(services);
      const server = createMcpServer({ memory, services, principal, schemas: apiSchemas(config), log: log.child({ component: 'mcp' }) });
      let closing: Promise<void> | null = null;
      const close = () =>
        (closing ??= (async () => {
          await server.close();
          await services.close();
        })());
      // the client ends the session by closing our stdin; turns it wrote are in the turn log already
      process.stdin.once('end', () => void close().then(() => process.exit(0)));
      await server.connect(new StdioServerTransport());
      process.stderr.write(`neuralcleave mcp: ready on stdio (${users.length > 0 ? `users ${users.join(', ')}` : 'every user'})\n`);
      await onShutdown(log, close);
    });
}
