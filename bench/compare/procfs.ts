// Parsers of what bench/compare reads from /proc: a process's CPU time (utime + stime of
// /proc/PID/stat, in clock ticks), its parent, and its resident memory (VmRSS of
// /proc/PID/status); plus the process tree, so a frontend that forks (a Python launcher and
// its workers) is counted whole.

import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/PID/stat times (getconf CLK_TCK on Linux x86-64). */
export const CLK_TCK = 100;

export interface StatLine {
  pid: number;
  ppid: number;
  /** utime + stime, clock ticks. */
  cpuTicks: number;
}

/** /proc/PID/stat. The command name is in parentheses and may itself hold spaces and ')'. */
export function parseStat(text: string): StatLine {
  const close = text.lastIndexOf(')');
  if (close < 0) throw new Error(`not a /proc/PID/stat line: ${text.slice(0, 80)}`);
  const pid = Number(text.slice(0, text.indexOf('(')).trim());
  // Fields after the name, numbered from 3 (state) as in proc(5).
  const f = text.slice(close + 2).trim().split(/\s+/);
  const field = (n: number) => Number(f[n - 3]);
  const out = { pid, ppid: field(4), cpuTicks: field(14) + field(15) };
  if (!Number.isFinite(out.pid) || !Number.isFinite(out.ppid) || !Number.isFinite(out.cpuTicks)) throw new Error(`unreadable /proc/PID/stat line: ${text.slice(0, 80)}`);
  return out;
}

/** VmRSS of /proc/PID/status, in kB (0 for a zombie, which has none). */
export function parseRssKb(status: string): number {
  const m = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status);
  return m ? Number(m[1]) : 0;
}

/** The pid and all its descendants alive now. */
export function processTree(root: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const s = parseStat(readFileSync(`/proc/${d}/stat`, 'utf8'));
      parent.set(s.pid, s.ppid);
    } catch {
      // gone meanwhile
    }
  }
  const tree = [root];
  for (let i = 0; i < tree.length; i++) for (const [pid, pp] of parent) if (pp === tree[i]) tree.push(pid);
  return tree;
}

function read(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** CPU ticks and RSS of a process tree. */
export function sampleTree(root: number): { cpuTicks: number; rssKb: number } {
  let cpuTicks = 0;
  let rssKb = 0;
  for (const pid of processTree(root)) {
    const stat = read(`/proc/${pid}/stat`);
    const status = read(`/proc/${pid}/status`);
    if (stat) cpuTicks += parseStat(stat).cpuTicks;
    if (status) rssKb += parseRssKb(status);
  }
  return { cpuTicks, rssKb };
}

/**
 * CPU time of every thread of a process tree, by thread id, in nanoseconds (the first field
 * of /proc/PID/task/TID/schedstat: time on a CPU, exact where /proc/PID/stat counts clock
 * ticks). A thread that exits between two samples takes its time with it, so a caller that
 * compares two samples checks that every thread of the first is still in the second.
 */
export function treeThreadRuntimeNs(root: number): Map<number, number> {
  const out = new Map<number, number>();
  for (const pid of processTree(root)) {
    let tids: string[];
    try {
      tids = readdirSync(`/proc/${pid}/task`);
    } catch {
      continue; // gone meanwhile
    }
    for (const tid of tids) {
      const s = read(`/proc/${pid}/task/${tid}/schedstat`);
      if (s) out.set(Number(tid), Number(s.split(' ')[0]));
    }
  }
  return out;
}

/** CPU ns the tree spent between two samples of treeThreadRuntimeNs, or null when a thread of `before` exited meanwhile (its time is lost). */
export function runtimeDeltaNs(before: Map<number, number>, after: Map<number, number>): number | null {
  let d = 0;
  for (const [tid, ns] of before) {
    const a = after.get(tid);
    if (a === undefined) return null;
    d += a - ns;
  }
  for (const [tid, ns] of after) if (!before.has(tid)) d += ns;
  return d;
}
