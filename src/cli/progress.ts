import cliProgress from 'cli-progress';

/** A progress bar on stderr (never stdout, which carries --json output); plain lines when stderr is not a terminal. */
export function progressBar(label: string, total: number): { update(n: number): void; stop(): void } {
  if (!process.stderr.isTTY) {
    let last = 0;
    return {
      update(n) {
        // a line every 10% keeps logs of non-interactive runs readable
        if (total > 0 && Math.floor((n * 10) / total) > Math.floor((last * 10) / total)) process.stderr.write(`${label}: ${n}/${total}\n`);
        last = n;
      },
      stop() {},
    };
  }
  const bar = new cliProgress.SingleBar(
    { stream: process.stderr, format: `${label} [{bar}] {percentage}% {value}/{total} {eta_formatted}`, hideCursor: true },
    cliProgress.Presets.shades_classic,
  );
  bar.start(total, 0);
  return { update: (n) => bar.update(n), stop: () => bar.stop() };
}
