import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The built CLI (npm test builds before running the suites). */
export const CLI = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI to completion with the given environment (NEURALCLEAVE_* config), in `cwd` when given. */
export function runCli(args: string[], env: Record<string, string>, input?: string, cwd?: string): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['pipe', 'pipe', 'pipe'], cwd });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input ?? '');
  });
}

/** Starts a long-running CLI command (serve, worker) and resolves once stderr shows `ready`. */
export function startCli(
  args: string[],
  env: Record<string, string>,
  ready: RegExp,
  timeoutMs = 30_000,
  /**
   * group: its own process group (signal `-pid` to reach a `serve --processes N` and its workers at once); cwd: its working folder;
   * spawned: told the child at once, so that a test's clean-up reaches it even when a sibling's start-up fails first
   */
  options: { group?: boolean; cwd?: string; spawned?: (child: ChildProcess) => void } = {},
): Promise<{ child: ChildProcess; match: RegExpMatchArray; output: () => string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: options.group ?? false, cwd: options.cwd });
    options.spawned?.(child);
    let out = '';
    const timer = setTimeout(() => {
      // a child left running would keep the test file's process alive until its timeout
      signalChild(child, 'SIGKILL', options.group);
      reject(new Error(`"${args.join(' ')}" not ready after ${timeoutMs} ms:\n${out}`));
    }, timeoutMs);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = out.match(ready);
      if (m) {
        clearTimeout(timer);
        resolve({ child, match: m, output: () => out });
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`"${args.join(' ')}" exited with ${code}:\n${out}`));
    });
  });
}

/** Sends `sig` to a child still running, or to its whole process group (`group`: started with `group`). */
export function signalChild(child: ChildProcess, sig: NodeJS.Signals, group = false): void {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    if (group && child.pid !== undefined) process.kill(-child.pid, sig);
    else child.kill(sig);
  } catch {
    // already gone
  }
}

/** Stops a child process and waits for it to exit. */
export function stop(child: ChildProcess, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(child.exitCode);
  return new Promise((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.kill(signal);
  });
}
