// A peer that is not loopback, made on this machine: a network namespace of the test's own,
// joined to the host by a veth pair with addresses from 198.18.0.0/15 (RFC 2544's range for
// network benchmark tests). Requests sent from inside the namespace reach a server listening on
// 0.0.0.0 here from the namespace's address, so the server sees a non-loopback client while no
// packet leaves the machine. Needs root and `ip` (iproute2); `create()` returns null otherwise.

import { execFileSync, spawn } from 'node:child_process';

export interface PeerCall {
  url: string;
  method: string;
  body?: string;
  headers?: Record<string, string>;
}

export interface PeerReply {
  status: number;
  headers: Record<string, string>;
  text: string;
}

export interface PeerNamespace {
  /** The host's address on the veth link: what the peer connects to. */
  readonly hostAddress: string;
  /** The peer's own address (what the server sees). */
  readonly peerAddress: string;
  /** Make the calls one after another from inside the namespace, each on a fresh connection. */
  calls(list: PeerCall[]): Promise<PeerReply[]>;
  remove(): void;
}

// Runs inside the namespace: reads the calls as JSON on stdin, prints the replies as JSON.
const CLIENT = `
let input = '';
process.stdin.on('data', (d) => (input += d));
process.stdin.on('end', async () => {
  const out = [];
  for (const c of JSON.parse(input)) {
    const res = await fetch(c.url, { method: c.method, body: c.body, headers: { connection: 'close', ...(c.headers || {}) } });
    out.push({ status: res.status, headers: Object.fromEntries(res.headers), text: await res.text() });
  }
  process.stdout.write(JSON.stringify(out));
});`;

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: 'pipe' });
}

export function createPeerNamespace(): PeerNamespace | null {
  const tag = `pt${process.pid % 100000}`;
  const ns = `portico-${tag}`;
  const block = (process.pid % 16384) * 4;
  const prefix = `198.${18 + (block >> 16)}.${(block >> 8) & 255}.`;
  const low = block & 255;
  const hostAddress = `${prefix}${low + 1}`;
  const peerAddress = `${prefix}${low + 2}`;
  try {
    ip('netns', 'add', ns);
  } catch {
    return null;
  }
  const remove = () => {
    try {
      ip('link', 'del', `${tag}h`);
    } catch {
      // gone with the namespace already
    }
    try {
      ip('netns', 'del', ns);
    } catch {
      // already removed
    }
  };
  try {
    ip('link', 'add', `${tag}h`, 'type', 'veth', 'peer', 'name', `${tag}p`);
    ip('link', 'set', `${tag}p`, 'netns', ns);
    ip('addr', 'add', `${hostAddress}/30`, 'dev', `${tag}h`);
    ip('link', 'set', `${tag}h`, 'up');
    ip('netns', 'exec', ns, 'ip', 'addr', 'add', `${peerAddress}/30`, 'dev', `${tag}p`);
    ip('netns', 'exec', ns, 'ip', 'link', 'set', `${tag}p`, 'up');
    ip('netns', 'exec', ns, 'ip', 'link', 'set', 'lo', 'up');
  } catch {
    remove();
    return null;
  }
  return {
    hostAddress,
    peerAddress,
    remove,
    calls(list) {
      return new Promise((resolve, reject) => {
        const child = spawn('ip', ['netns', 'exec', ns, process.execPath, '-e', CLIENT], { stdio: ['pipe', 'pipe', 'pipe'] });
        let out = '';
        let err = '';
        child.stdout.on('data', (d: Buffer) => (out += d));
        child.stderr.on('data', (d: Buffer) => (err += d));
        child.once('error', reject);
        child.once('exit', (code) => {
          if (code !== 0) reject(new Error(`the peer's calls failed (exit ${code}): ${err}`));
          else resolve(JSON.parse(out) as PeerReply[]);
        });
        child.stdin.end(JSON.stringify(list));
      });
    },
  };
}
