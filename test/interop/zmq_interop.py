"""Wire check of vLLM's ZMQ KV-event format, both directions, using msgspec
(the encoder vLLM uses) with structs declared here in vLLM's field order.

1. Portico's mock publishes (array and map layouts); Python subscribes and
   decodes every batch into the typed structs: tags, fields and the
   [topic, 8-byte big-endian seq, payload] framing must be accepted as-is.
2. Python publishes msgspec-encoded batches (both layouts, a uint64 hash);
   Portico's ZmqKvEventSubscriber ingests them and prints what it understood.

    /tmp/v/bin/pip install msgspec pyzmq
    npm run build:ts
    /tmp/v/bin/python test/interop/zmq_interop.py
"""

import json
import os
import subprocess
import sys
import time
from typing import Any, Optional, Union

import msgspec
import zmq

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def structs(array_like):
    class Event(msgspec.Struct, array_like=array_like, omit_defaults=True, tag=True):
        pass

    class BlockStored(Event):
        block_hashes: list[int]
        parent_block_hash: Optional[int]
        token_ids: list[int]
        block_size: int
        lora_id: Optional[int]
        medium: Optional[str] = None
        lora_name: Optional[str] = None

    class BlockRemoved(Event):
        block_hashes: list[int]
        medium: Optional[str] = None

    class AllBlocksCleared(Event):
        pass

    class Batch(msgspec.Struct, array_like=array_like, omit_defaults=True):
        ts: float
        events: list[Union[BlockStored, BlockRemoved, AllBlocksCleared]]
        data_parallel_rank: Optional[int] = None

    return Batch, BlockStored, BlockRemoved, AllBlocksCleared


def check(cond, what):
    print(("PASS " if cond else "FAIL ") + what)
    return bool(cond)


MOCK = """
import { startMockEngine } from './dist/src/mock/engine-server.js';
import { createEngineClient } from './dist/src/engine/factory.js';
const m = await startMockEngine({ port: 0, mode: 'sim', eosTokenIds: [99], vocabSize: 100, eosProbability: 0,
  speedupRatio: 100, blockSize: 4, numBlocks: 8, kvEventsZmq: { endpoint: 'tcp://127.0.0.1:*', topic: 'kv', layout: process.argv[1] } });
console.log(m.zmq.endpoint);
await new Promise((r) => setTimeout(r, 300));
const c = createEngineClient(m.url);
for (let i = 0; i < 6; i++) {
  const ids = Uint32Array.from({ length: 9 }, (_, k) => i * 10 + k);
  for await (const _ of c.generate({ requestId: 'z' + i, inputIds: ids, maxNewTokens: 2, stream: true }, new AbortController().signal)) {}
}
await new Promise((r) => setTimeout(r, 200));
c.close();
await m.close();
process.exit(0);
"""


def python_subscribes(layout):
    Batch, Stored, Removed, Cleared = structs(layout == "array")
    dec = msgspec.msgpack.Decoder(Batch)
    proc = subprocess.Popen(["node", "--input-type=module", "-e", MOCK, layout], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    endpoint = proc.stdout.readline().strip()
    sub = zmq.Context.instance().socket(zmq.SUB)
    sub.connect(endpoint)
    sub.setsockopt(zmq.SUBSCRIBE, b"kv")
    sub.setsockopt(zmq.RCVTIMEO, 1500)
    seqs, kinds, ok = [], set(), True
    try:
        while True:
            topic, seq, payload = sub.recv_multipart()
            seqs.append(int.from_bytes(seq, "big"))
            b = dec.decode(payload)
            for e in b.events:
                kinds.add(type(e).__name__)
                if isinstance(e, Stored):
                    ok &= len(e.token_ids) == len(e.block_hashes) * e.block_size
    except zmq.Again:
        pass
    proc.wait(timeout=10)
    sub.close()
    r = check(seqs and seqs == list(range(seqs[0], seqs[0] + len(seqs))),
              f"{layout}: msgspec decoded {len(seqs)} batches from Portico's publisher, consecutive seqs")
    r &= check(ok and {"BlockStored", "BlockRemoved"} <= kinds, f"{layout}: event kinds {sorted(kinds)}")
    return r


SUB = """
import { ZmqKvEventSubscriber } from './dist/src/engine/kv-events/index.js';
const out = [];
const s = new ZmqKvEventSubscriber({ endpoint: process.argv[1], worker: 'py', sink: (ev) => out.push(...ev) });
s.start();
console.log('ready');
setTimeout(() => {
  s.close();
  console.log(JSON.stringify({ stats: s.stats, events: out }, (k, v) => (typeof v === 'bigint' ? v.toString() : v)));
  process.exit(0);
}, 1200);
"""


def portico_subscribes(layout):
    Batch, Stored, Removed, Cleared = structs(layout == "array")
    enc = msgspec.msgpack.Encoder()
    pub = zmq.Context.instance().socket(zmq.PUB)
    port = pub.bind_to_random_port("tcp://127.0.0.1")
    proc = subprocess.Popen(["node", "--input-type=module", "-e", SUB, f"tcp://127.0.0.1:{port}"], cwd=ROOT,
                            stdout=subprocess.PIPE, text=True)
    proc.stdout.readline()
    time.sleep(0.3)
    big = 2**64 - 3  # a uint64 hash, as Python's hash-based block ids can be
    batches = [
        Batch(ts=1.0, events=[Stored(block_hashes=[big, 11], parent_block_hash=None, token_ids=[1, 2, 3, 4],
                                     block_size=2, lora_id=None, medium="GPU")], data_parallel_rank=0),
        Batch(ts=2.0, events=[Removed(block_hashes=[11], medium="GPU")]),
        Batch(ts=3.0, events=[Cleared()], data_parallel_rank=1),
    ]
    for seq, b in enumerate(batches):
        pub.send_multipart([b"", seq.to_bytes(8, "big"), enc.encode(b)])
    lines = proc.stdout.read().strip().splitlines()
    proc.wait(timeout=10)
    pub.close()
    res = json.loads(lines[-1])
    ev = [e for e in res["events"] if e["kind"] != "reset"]
    kinds = [e["kind"] for e in ev]
    r = check(kinds == ["stored", "removed", "cleared"], f"{layout}: Portico ingested {kinds}")
    r &= check(ev[0]["blocks"][0]["hash"] == str(big - 2**64) and ev[0]["blocks"][1]["tokenIds"] == [3, 4]
               and ev[2]["dpRank"] == 1 and res["stats"]["gaps"] == 0,
               f"{layout}: uint64 hash as int64 {ev[0]['blocks'][0]['hash']}, tokens split per block, dp rank kept")
    return r


def main():
    ok = True
    for layout in ("array", "map"):
        ok &= python_subscribes(layout)
        ok &= portico_subscribes(layout)
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
