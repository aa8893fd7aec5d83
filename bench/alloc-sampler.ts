// Preloaded into a server under test (`node --import dist/bench/alloc-sampler.js ...`): the
// first SIGUSR2 starts V8's sampling heap profiler (objects later collected by a scavenge or a
// full GC counted too, so it sees what a request allocates, not what it keeps; with
// ALLOC_SAMPLE_LIVE=1 only the sampled objects still alive when it stops); the second
// stops it, writes the profile's call tree to $ALLOC_SAMPLE_OUT and prints one probe line
// (`gc-probe {json}`, read by serve-procs.ts) with the bytes sampled.

import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const out = process.env.ALLOC_SAMPLE_OUT ?? 'alloc-sample.json';
const interval = Number(process.env.ALLOC_SAMPLE_INTERVAL ?? 256);
const collected = process.env.ALLOC_SAMPLE_LIVE !== '1';
const session = new Session();
session.connect();
let sampling = false;

function post<T>(method: string, params?: object): Promise<T> {
  return new Promise((resolve, reject) => session.post(method, params ?? {}, (err, res) => (err ? reject(err) : resolve(res as T))));
}

interface Node {
  selfSize: number;
  children: Node[];
}

function total(n: Node): number {
  let s = n.selfSize;
  for (const c of n.children) s += total(c);
  return s;
}

process.on('SIGUSR2', () => {
  void (async () => {
    if (!sampling) {
      sampling = true;
      await post('HeapProfiler.enable');
      await post('HeapProfiler.startSampling', { samplingInterval: interval, includeObjectsCollectedByMajorGC: collected, includeObjectsCollectedByMinorGC: collected });
      process.stdout.write(`gc-probe ${JSON.stringify({ sampling: 1 })}\n`);
      return;
    }
    sampling = false;
    const { profile } = await post<{ profile: { head: Node } }>('HeapProfiler.stopSampling');
    writeFileSync(out, JSON.stringify(profile.head));
    process.stdout.write(`gc-probe ${JSON.stringify({ sampling: 0, bytes: total(profile.head) })}\n`);
  })();
});
