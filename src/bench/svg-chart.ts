// A small SVG chart writer for the bench report: line or dot series on linear or log10 axes,
// with ticks, labels and a legend. Hand-written (about a hundred lines) because the report must
// be one self-contained file and the PNG is rendered without a browser; a plotting library
// would need a DOM or a browser to lay out its SVG.

export interface Series {
  name: string;
  points: [number, number][];
  /** 'line' (default) or 'dots'. */
  style?: 'line' | 'dots';
}

export interface Chart {
  title: string;
  xLabel: string;
  yLabel: string;
  series: Series[];
  logX?: boolean;
  width?: number;
  height?: number;
  /** Fixed y range (e.g. [0, 1] for a CDF). */
  yRange?: [number, number];
  /** Where the legend goes inside the plot (default top-left). */
  legend?: 'top-left' | 'bottom-right';
}

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];

function esc(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function fmt(v: number): string {
  if (v === 0) return '0';
  const a = Math.abs(v);
  if (a >= 1e6) return `${+(v / 1e6).toPrecision(3)}M`;
  if (a >= 1e4) return `${+(v / 1e3).toPrecision(3)}k`;
  return String(+v.toPrecision(3));
}

function linearTicks(lo: number, hi: number, n = 6): number[] {
  const span = hi - lo || 1;
  const raw = span / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(+v.toPrecision(12));
  return out;
}

function logTicks(lo: number, hi: number): number[] {
  const out: number[] = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) {
    for (const m of hi / lo > 1000 ? [1] : [1, 2, 5]) {
      const v = m * 10 ** e;
      if (v >= lo && v <= hi) out.push(v);
    }
  }
  return out;
}

export function svgChart(c: Chart): string {
  const W = c.width ?? 760;
  const H = c.height ?? 400;
  const m = { l: 70, r: 20, t: 36, b: 50 };
  const pw = W - m.l - m.r;
  const ph = H - m.t - m.b;
  const all = c.series.flatMap((s) => s.points).filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y) && (!c.logX || x > 0));
  const xs = all.map((p) => p[0]);
  const ys = all.map((p) => p[1]);
  let x0 = xs.length ? Math.min(...xs) : 0;
  let x1 = xs.length ? Math.max(...xs) : 1;
  if (c.logX) {
    x0 = x0 > 0 ? x0 / 1.2 : 0.1;
    x1 = Math.max(x1 * 1.2, x0 * 10);
  } else if (x0 === x1) [x0, x1] = [x0 - 1, x1 + 1];
  else x0 = Math.min(0, x0);
  let [y0, y1] = c.yRange ?? [Math.min(0, ...ys), ys.length ? Math.max(...ys) * 1.08 : 1];
  if (y0 === y1) y1 = y0 + 1;
  const X = (x: number) => m.l + (c.logX ? (Math.log10(x) - Math.log10(x0)) / (Math.log10(x1) - Math.log10(x0)) : (x - x0) / (x1 - x0)) * pw;
  const Y = (y: number) => m.t + ph - ((y - y0) / (y1 - y0)) * ph;
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="DejaVu Sans, Arial, sans-serif" font-size="12">`);
  parts.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  parts.push(`<text x="${W / 2}" y="20" text-anchor="middle" font-size="15" font-weight="bold">${esc(c.title)}</text>`);
  for (const t of c.logX ? logTicks(x0, x1) : linearTicks(x0, x1)) {
    const x = X(t).toFixed(1);
    parts.push(`<line x1="${x}" x2="${x}" y1="${m.t}" y2="${m.t + ph}" stroke="#e5e5e5"/><text x="${x}" y="${m.t + ph + 16}" text-anchor="middle">${fmt(t)}</text>`);
  }
  for (const t of linearTicks(y0, y1, 5)) {
    const y = Y(t).toFixed(1);
    parts.push(`<line x1="${m.l}" x2="${m.l + pw}" y1="${y}" y2="${y}" stroke="#e5e5e5"/><text x="${m.l - 6}" y="${+y + 4}" text-anchor="end">${fmt(t)}</text>`);
  }
  parts.push(`<rect x="${m.l}" y="${m.t}" width="${pw}" height="${ph}" fill="none" stroke="#888"/>`);
  parts.push(`<text x="${m.l + pw / 2}" y="${H - 10}" text-anchor="middle">${esc(c.xLabel)}</text>`);
  parts.push(`<text transform="translate(16 ${m.t + ph / 2}) rotate(-90)" text-anchor="middle">${esc(c.yLabel)}</text>`);
  c.series.forEach((s, i) => {
    const color = COLORS[i % COLORS.length];
    const pts = s.points.filter(([x, y]) => Number.isFinite(x) && Number.isFinite(y) && (!c.logX || x > 0));
    if (s.style === 'dots') for (const [x, y] of pts) parts.push(`<circle cx="${X(x).toFixed(1)}" cy="${Y(y).toFixed(1)}" r="2" fill="${color}" fill-opacity="0.6"/>`);
    else if (pts.length) parts.push(`<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map(([x, y]) => `${X(x).toFixed(1)},${Y(y).toFixed(1)}`).join(' ')}"/>`);
    const bottom = c.legend === 'bottom-right';
    const ly = bottom ? m.t + ph - 10 - (c.series.length - 1 - i) * 16 : m.t + 16 + i * 16;
    const lx = bottom ? m.l + pw - 190 : m.l + 10;
    parts.push(`<rect x="${lx}" y="${ly - 9}" width="12" height="10" fill="${color}"/><text x="${lx + 18}" y="${ly}">${esc(s.name)}</text>`);
  });
  parts.push('</svg>');
  return parts.join('\n');
}
