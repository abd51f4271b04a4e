import cliProgress from 'cli-progress';

/**
 * A progress bar on stderr (never stdout, which carries --json output), only when stderr is a
 * terminal: in a script or a log, progress lines are noise between the lines that matter.
 */
export function progressBar(label: string, total: number): { update(n: number): void; stop(): void } {
  if (!process.stderr.isTTY) return { update() {}, stop() {} };
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format: `${label} [{bar}] {percentage}% {value}/{total} {eta_formatted}`, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  return { update: (n) => bar.update(n), stop: () => bar.stop() };
}
