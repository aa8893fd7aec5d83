// The table of bench/compare/deploy-shape.ts, and its place in bench/RESULTS.md (between two
// marker comments, so a new run replaces the old table and nothing else).

/** measure key → frontend → one value per round. */
export type DeployCells = Record<string, Record<string, number[]>>;

export const DEPLOY_BEGIN = '<!-- bench:deploy-shape begin -->';
export const DEPLOY_END = '<!-- bench:deploy-shape end -->';

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

export function renderDeployTable(cells: DeployCells, names: string[], rates: number[], o: { header: string; failures?: Map<string, string> }): string {
  const rows: [string, string, number][] = [['idle.cpuMsPerS', 'idle CPU (ms/s)', 1]];
  for (const r of rates) {
    rows.push([`r${r}.cpuUs`, `${r} req/s: CPU per 1-token request (µs)`, 0], [`r${r}.p50`, `${r} req/s: e2e p50 (ms)`, 2], [`r${r}.p99`, `${r} req/s: e2e p99 (ms)`, 2], [`r${r}.rps`, `${r} req/s: served req/s`, 0]);
  }
  rows.push(['stream.cpuUsPerToken', 'streams: CPU per streamed token (µs)', 1], ['stream.ttftP50', 'streams: TTFT p50 (ms)', 2], ['stream.ttftP99', 'streams: TTFT p99 (ms)', 2]);
  const ratios = [['Portico', 'SMG'], ['Portico', 'floor'], ...names.filter((n) => n.startsWith('Portico@') || n.startsWith('Portico^')).map((n) => [n, 'Portico'])].filter(([a, b]) => names.includes(a!) && names.includes(b!));
  const cols = (xs: string[]) => xs.map((x) => ` ${x} |`).join('');
  const lines = [o.header, '', `Median over rounds (range when rounds differ).`, '', `| measure |${cols(names)}${cols(ratios.map(([a, b]) => `${a}/${b}`))}`, `|---|${cols([...names, ...ratios].map(() => '---:'))}`];
  for (const [key, title, digits] of rows) {
    const byName = cells[key];
    if (!byName) continue;
    const fmt = (xs: number[] | undefined) => {
      if (!xs?.length) return '—';
      const m = median(xs).toFixed(digits);
      const lo = Math.min(...xs).toFixed(digits);
      const hi = Math.max(...xs).toFixed(digits);
      return lo === hi ? m : `${m} (${lo}–${hi})`;
    };
    const ratio = ([a, b]: string[]) => (byName[a!]?.length && byName[b!]?.length ? (median(byName[a!]!) / median(byName[b!]!)).toFixed(2) : '—');
    lines.push(`| ${title} |${cols(names.map((n) => fmt(byName[n])))}${cols(ratios.map(ratio))}`);
  }
  const failed = names.map((n) => [n, Object.entries(cells).filter(([k]) => k.endsWith('.failed')).reduce((a, [, v]) => a + (v[n] ?? []).reduce((x, y) => x + y, 0), 0)] as const);
  lines.push('', `Failed requests: ${failed.map(([n, f]) => `${n} ${f}`).join(', ')}.`);
  for (const [n, why] of o.failures ?? []) lines.push('', `${n} did not complete: ${why}`);
  return `${DEPLOY_BEGIN}\n${lines.join('\n')}\n${DEPLOY_END}\n`;
}

/** RESULTS.md with its deploy-shape table replaced (or appended when it has none). */
export function replaceDeploySection(text: string, table: string): string {
  const a = text.indexOf(DEPLOY_BEGIN);
  const b = text.indexOf(DEPLOY_END);
  if (a < 0 || b < a) return `${text.trimEnd()}\n\n## The deployment shape: \`PARTS=deploy npm run bench:compare\`\n\n${table}`;
  return text.slice(0, a) + table + text.slice(b + DEPLOY_END.length + 1);
}
