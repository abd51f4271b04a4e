import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';

/** One measured figure, beside the raw limit measured in the same run. */
export interface Row {
  section: string;
  metric: string;
  value: number;
  unit: string;
  /** the raw limit measured in this run, same unit */
  baseline?: number;
  baselineLabel?: string;
  /** value / baseline (for rates) or baseline / value (for latencies): higher is better, 1 = at the limit */
  ratio?: number;
  /** the target to report against, e.g. "≥ 0.5 of bare insert" */
  target?: string;
  met?: boolean;
  note?: string;
  /** the machine's 1-minute load average when the row was measured (set by Report.add) */
  load?: number;
}

export class Report {
  readonly rows: Row[] = [];

  add(row: Row): void {
    const r: Row = { ...row, load: row.load ?? loadavg()[0]! };
    this.rows.push(r);
    const base = r.baseline !== undefined ? `  | baseline ${fmt(r.baseline)} ${r.unit} (${r.baselineLabel ?? ''}) ratio ${r.ratio?.toFixed(3) ?? '-'}` : '';
    const target = r.target ? `  | target ${r.target}: ${r.met === undefined ? '-' : r.met ? 'MET' : 'NOT MET'}` : '';
    process.stdout.write(`[${r.section}] ${r.metric}: ${fmt(r.value)} ${r.unit}${base}${target}${r.note ? `  (${r.note})` : ''}  [load ${r.load!.toFixed(1)}]\n`);
  }

  write(dir: string): void {
    mkdirSync(dir, { recursive: true });
    const machine = { cores: cpus().length, cpu: cpus()[0]?.model ?? 'unknown', node: process.version };
    writeFileSync(join(dir, 'report.json'), JSON.stringify({ at: new Date().toISOString(), machine, rows: this.rows }, null, 2));
    const lines = [
      `Run at ${new Date().toISOString()} on ${machine.cores} cores (${machine.cpu}), Node ${machine.node}; load = 1-minute load average when the row was measured.`,
      '',
      '| section | metric | value | baseline (same run) | ratio | target | met | load |',
      '| --- | --- | --- | --- | --- | --- | --- | --- |',
      ...this.rows.map(
        (r) =>
          `| ${r.section} | ${r.metric} | ${fmt(r.value)} ${r.unit} | ${r.baseline !== undefined ? `${fmt(r.baseline)} ${r.unit} (${r.baselineLabel ?? ''})` : ''} | ${r.ratio?.toFixed(3) ?? ''} | ${r.target ?? ''} | ${r.met === undefined ? '' : r.met ? 'met' : '**NOT MET**'} | ${r.load?.toFixed(1) ?? ''} |`,
      ),
    ];
    writeFileSync(join(dir, 'report.md'), `${lines.join('\n')}\n`);
  }
}

export function fmt(x: number): string {
  if (Math.abs(x) >= 1000) return Math.round(x).toLocaleString('en-US');
  if (Math.abs(x) >= 10) return x.toFixed(1);
  return x.toFixed(3);
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i]!;
}

/** A benchmark section: measures, adds rows, cleans up after itself. */
export type Section = (report: Report, options: { quick: boolean }) => Promise<void>;
