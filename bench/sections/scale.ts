// Retrieve latency against stored turns, all of ONE user (the worst case: the semantic tier scans all
// of them): p50 and p99 of the one-pass retriever at 10k, 100k, 300k and 1M turns, beside the int8
// scan floor at each size (the kernel alone over the same codes), on the corpus and queries of the
// `retrieve` section. Draws docs/bench.svg from them (full runs only; `--quick` stops at 50k and
// leaves the chart alone).
// Takes: --quick. Adds rows to the report; removes its files.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fmt, type Section } from '../report.js';
import { corpus, fill, measure } from './retrieve.js';

interface Point {
  turns: number;
  p50: number;
  p99: number;
  floor: number;
  load: number;
}

const section: Section = async (report, { quick }) => {
  const sizes = quick ? [10_000, 50_000] : [10_000, 100_000, 300_000, 1_000_000];
  const dir = mkdtempSync(join(tmpdir(), 'nc-bench-scale-'));
  const points: Point[] = [];
  try {
    const c = await corpus(dir, 'scale');
    try {
      for (const n of sizes) {
        const started = performance.now();
        await fill(c, n, 1);
        const fillS = (performance.now() - started) / 1000;
        const queries = n >= 1_000_000 ? 100 : 200;
        const m = await measure(null, c, `${n} turns`, queries, () => 'user-0');
        const load = loadavg()[0]!;
        points.push({ turns: n, p50: m.p50, p99: m.p99, floor: m.floorP50, load });
        report.add({
          section: 'scale', metric: `retrieve p50, ${n.toLocaleString('en-US')} turns, 1 user`, value: m.p50, unit: 'ms', baseline: m.floorP50,
          baselineLabel: 'int8 scan floor, p50', ratio: m.floorP50 / m.p50, note: `p99 ${fmt(m.p99)} ms; ${queries} queries; filled in ${fillS.toFixed(0)} s`,
        });
      }
    } finally {
      await c.services.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (!quick) {
    mkdirSync(join(process.cwd(), 'docs'), { recursive: true });
    writeFileSync(join(process.cwd(), 'docs', 'bench.svg'), chart(points));
    process.stdout.write('chart written to docs/bench.svg\n');
  }
};

/** A log–log line chart of p50, p99 and the floor against stored turns, as a standalone SVG. */
export function chart(points: readonly Point[]): string {
  const W = 640;
  const H = 360;
  const L = 64;
  const R = 150;
  const T = 40;
  const B = 48;
  const xs = points.map((p) => p.turns);
  const ys = points.flatMap((p) => [p.p50, p.p99, p.floor]).filter((y) => y > 0);
  const x0 = Math.log10(Math.min(...xs));
  const x1 = Math.log10(Math.max(...xs));
  const y0 = Math.floor(Math.log10(Math.min(...ys)));
  const y1 = Math.ceil(Math.log10(Math.max(...ys)));
  const px = (x: number) => L + ((Math.log10(x) - x0) / Math.max(1e-9, x1 - x0)) * (W - L - R);
  const py = (y: number) => T + (1 - (Math.log10(Math.max(y, 10 ** y0)) - y0) / Math.max(1e-9, y1 - y0)) * (H - T - B);
  const series: Array<{ name: string; color: string; dash: string; value: (p: Point) => number }> = [
    { name: 'retrieve p99', color: '#c0392b', dash: '', value: (p) => p.p99 },
    { name: 'retrieve p50', color: '#2c6fbb', dash: '', value: (p) => p.p50 },
    { name: 'int8 scan floor', color: '#7f8c8d', dash: '6 4', value: (p) => p.floor },
  ];
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`,
    `<rect width="${W}" height="${H}" fill="#fff"/>`,
    `<text x="${L}" y="22" font-size="14" font-weight="bold">Retrieve latency vs stored turns (one user, hash embedder)</text>`,
  ];
  for (let e = y0; e <= y1; e++) {
    const y = py(10 ** e);
    out.push(`<line x1="${L}" x2="${W - R}" y1="${y}" y2="${y}" stroke="#e5e5e5"/>`, `<text x="${L - 8}" y="${y + 4}" text-anchor="end">${10 ** e >= 1 ? 10 ** e : (10 ** e).toFixed(-e)} ms</text>`);
  }
  for (const p of points) {
    const x = px(p.turns);
    out.push(
      `<line x1="${x}" x2="${x}" y1="${T}" y2="${H - B}" stroke="#f0f0f0"/>`,
      `<text x="${x}" y="${H - B + 18}" text-anchor="middle">${p.turns >= 1e6 ? `${p.turns / 1e6}M` : `${p.turns / 1e3}k`}</text>`,
      `<text x="${x}" y="${H - B + 32}" text-anchor="middle" fill="#999" font-size="10">load ${p.load.toFixed(1)}</text>`,
    );
  }
  out.push(`<line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="#333"/>`, `<line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" stroke="#333"/>`);
  series.forEach((s, i) => {
    const path = points.map((p) => `${px(p.turns).toFixed(1)},${py(s.value(p)).toFixed(1)}`).join(' ');
    out.push(`<polyline points="${path}" fill="none" stroke="${s.color}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`);
    for (const p of points) out.push(`<circle cx="${px(p.turns).toFixed(1)}" cy="${py(s.value(p)).toFixed(1)}" r="3" fill="${s.color}"><title>${s.name}: ${fmt(s.value(p))} ms at ${p.turns} turns</title></circle>`);
    const ly = T + 10 + i * 20;
    out.push(`<line x1="${W - R + 14}" x2="${W - R + 38}" y1="${ly}" y2="${ly}" stroke="${s.color}" stroke-width="2"${s.dash ? ` stroke-dasharray="${s.dash}"` : ''}/>`, `<text x="${W - R + 44}" y="${ly + 4}">${s.name}</text>`);
  });
  out.push(`<text x="${(L + W - R) / 2}" y="${H - 4}" text-anchor="middle">stored turns (log scale); run of ${new Date().toISOString().slice(0, 10)}</text>`, '</svg>');
  return `${out.join('\n')}\n`;
}

export default section;
