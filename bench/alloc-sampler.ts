// Preloaded into a server under test (`node --import dist/bench/alloc-sampler.js ...`): the
// first SIGUSR2 starts V8's sampling heap profiler (objects later collected by a scavenge or a
// full GC counted too, so it sees what a request allocates, not what it keeps; with
// ALLOC_SAMPLE_LIVE=1 only the sampled objects still alive when it stops; with
// ALLOC_SAMPLE_SURVIVORS=1 those a scavenge found alive, later collected or not); the second
// stops it, writes the profile's call tree to $ALLOC_SAMPLE_OUT and prints one probe line
// (`gc-probe {json}`, read by serve-procs.ts) with the bytes sampled.

import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

const out = process.env.ALLOC_SAMPLE_OUT ?? 'alloc-sample.json';
const interval = Number(process.env.ALLOC_SAMPLE_INTERVAL ?? 256);
const live = process.env.ALLOC_SAMPLE_LIVE === '1';
const survivors = process.env.ALLOC_SAMPLE_SURVIVORS === '1';
// Survivors: objects a scavenge found alive (copied or promoted), whether a full GC took them later or not.
const collectedMajor = !live;
const collectedMinor = !live && !survivors;
// With survivors, a scavenge just before the profile stops drops what the last requests
// allocated and nothing has scavenged yet (V8's gc extension, exposed for this process only).
if (survivors) setFlagsFromString('--expose-gc');
const gc = survivors ? (runInNewContext('gc') as (o: { type: 'minor' }) => void) : null;
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
      await post('HeapProfiler.startSampling', { samplingInterval: interval, includeObjectsCollectedByMajorGC: collectedMajor, includeObjectsCollectedByMinorGC: collectedMinor });
      process.stdout.write(`gc-probe ${JSON.stringify({ sampling: 1 })}\n`);
      return;
    }
    sampling = false;
    gc?.({ type: 'minor' });
    const { profile } = await post<{ profile: { head: Node } }>('HeapProfiler.stopSampling');
    writeFileSync(out, JSON.stringify(profile.head));
    process.stdout.write(`gc-probe ${JSON.stringify({ sampling: 0, bytes: total(profile.head) })}\n`);
  })();
});
