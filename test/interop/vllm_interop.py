"""Wire check: Portico's mock engine in vLLM mode, and its KV-event stream in
both modes, against the reference Python stubs of PyPI `smg-grpc-proto`.

    python -m venv /tmp/v && /tmp/v/bin/pip install smg-grpc-proto grpcio
    npm run build:ts            # the mock is started from dist/
    /tmp/v/bin/python test/interop/vllm_interop.py

Checks (vllm.grpc.engine.VllmEngine): HealthCheck, GetModelInfo,
GetServerInfo, Generate (stream: deltas that sum up; non-stream), Abort with
a list of ids, GetLoads. Then, for both protocols, SubscribeKvEvents: a
snapshot first, then batches with consecutive sequence numbers whose stored
blocks carry token ids, block size and a parent hash.
Exit status 0 = every check passed.
"""

import os
import subprocess
import sys
import threading
import time

import grpc
from smg_grpc_proto.generated import common_pb2
from smg_grpc_proto import vllm_engine_pb2 as vpb
from smg_grpc_proto import vllm_engine_pb2_grpc as vpb_grpc
from smg_grpc_proto import sglang_scheduler_pb2 as spb
from smg_grpc_proto import sglang_scheduler_pb2_grpc as spb_grpc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAUNCH = """
import { startMockEngine } from './dist/src/mock/engine-server.js';
const m = await startMockEngine({ port: 0, mode: 'sim', protocol: process.argv[1], eosTokenIds: [99], vocabSize: 100,
  servedModelName: 'interop', stepMs: 5, eosProbability: 0, blockSize: 4, numBlocks: 64, speedupRatio: 2 });
console.log(m.port);
process.stdin.on('end', () => m.close().then(() => process.exit(0)));
process.stdin.resume();
"""


def start_mock(protocol):
    proc = subprocess.Popen(["node", "--input-type=module", "-e", LAUNCH, protocol],
                            cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    return proc, f"127.0.0.1:{int(proc.stdout.readline())}"


def check(cond, what):
    print(("PASS " if cond else "FAIL ") + what)
    return bool(cond)


def vllm_sampling(**kw):
    base = dict(temperature=1.0, top_p=1.0, top_k=0, repetition_penalty=1.0, n=1)
    base.update(kw)
    return vpb.SamplingParams(**base)


def run_vllm(ch):
    ok = True
    stub = vpb_grpc.VllmEngineStub(ch)
    h = stub.HealthCheck(vpb.HealthCheckRequest(), timeout=5)
    ok &= check(h.healthy, f"vllm HealthCheck healthy={h.healthy}")
    mi = stub.GetModelInfo(vpb.GetModelInfoRequest(), timeout=5)
    ok &= check(mi.vocab_size == 100 and list(mi.eos_token_ids) == [99], f"vllm GetModelInfo name={mi.served_model_name!r}")
    si = stub.GetServerInfo(vpb.GetServerInfoRequest(), timeout=5)
    ok &= check(si.block_size == 4 and si.data_parallel_size == 1 and si.server_type == "vllm-grpc",
                f"vllm GetServerInfo block_size={si.block_size} dp={si.data_parallel_size} max_num_seqs={si.max_num_seqs}")

    req = vpb.GenerateRequest(request_id="v-1", tokenized=vpb.TokenizedInput(input_ids=[5, 6, 7, 8]),
                              sampling_params=vllm_sampling(max_tokens=5, seed=3), stream=True)
    chunks, completes = [], []
    for res in stub.Generate(req, timeout=10):
        kind = res.WhichOneof("response")
        (chunks if kind == "chunk" else completes).append(getattr(res, kind))
    toks = [t for c in chunks for t in c.token_ids]
    ok &= check(len(toks) == 5 and sum(c.completion_tokens for c in chunks) == 5 and len(completes) == 1
                and completes[0].finish_reason == "length",
                f"vllm Generate stream: {len(chunks)} chunks, tokens={toks}, finish={completes[0].finish_reason if completes else None}")

    req2 = vpb.GenerateRequest(request_id="v-2", tokenized=vpb.TokenizedInput(input_ids=[1, 2]),
                               sampling_params=vllm_sampling(max_tokens=3), stream=False)
    res2 = list(stub.Generate(req2, timeout=10))
    ok &= check(len(res2) == 1 and len(res2[0].complete.output_ids) == 3 and res2[0].complete.completion_tokens == 3,
                f"vllm Generate non-stream: output_ids={list(res2[0].complete.output_ids)}")

    req3 = vpb.GenerateRequest(request_id="v-3", tokenized=vpb.TokenizedInput(input_ids=list(range(1, 30))),
                               sampling_params=vllm_sampling(max_tokens=5000), stream=True)
    timer = threading.Timer(0.05, lambda: stub.Abort(vpb.AbortRequest(request_ids=["v-3", "nope"]), timeout=5))
    timer.start()
    last = None
    for res in stub.Generate(req3, timeout=10):
        last = res
    timer.join()
    ok &= check(last is not None and last.complete.finish_reason == "abort", "vllm Abort(request_ids) ends the stream with abort")

    loads = stub.GetLoads(vpb.GetLoadsRequest(include=["core"]), timeout=5)
    ok &= check(loads.dp_rank_count == 1 and len(loads.loads) == 1 and loads.loads[0].max_total_num_tokens == 256,
                f"vllm GetLoads used={loads.loads[0].num_used_tokens}/{loads.loads[0].max_total_num_tokens}")
    return ok, lambda prompt, rid: list(stub.Generate(vpb.GenerateRequest(
        request_id=rid, tokenized=vpb.TokenizedInput(input_ids=prompt), sampling_params=vllm_sampling(max_tokens=2),
        stream=True), timeout=10))


def sglang_gen(ch):
    stub = spb_grpc.SglangSchedulerStub(ch)
    return lambda prompt, rid: list(stub.Generate(spb.GenerateRequest(
        request_id=rid, tokenized=spb.TokenizedInput(input_ids=prompt),
        sampling_params=spb.SamplingParams(temperature=1.0, top_p=1.0, top_k=-1, repetition_penalty=1.0, n=1,
                                           max_new_tokens=2), stream=True), timeout=10))


def run_kv_events(ch, protocol, gen):
    ok = True
    stub = (vpb_grpc.VllmEngineStub if protocol == "vllm" else spb_grpc.SglangSchedulerStub)(ch)
    gen(list(range(1, 14)), f"{protocol}-kv-0")  # something cached before subscribing
    stream = stub.SubscribeKvEvents(common_pb2.SubscribeKvEventsRequest(start_sequence_number=0), timeout=10)
    batches = []

    def reader():
        try:
            for b in stream:
                batches.append(b)
        except grpc.RpcError:
            pass

    t = threading.Thread(target=reader)
    t.start()
    time.sleep(0.2)
    for i in range(3):
        gen(list(range(1, 9)) + [50 + i] * 6, f"{protocol}-kv-{i + 1}")
    time.sleep(0.3)
    stream.cancel()
    t.join()
    snap = [b for b in batches if b.HasField("snapshot")]
    live = [b for b in batches if not b.HasField("snapshot")]
    ok &= check(len(snap) >= 1 and sum(len(b.events) for b in snap) >= 3,
                f"{protocol} SubscribeKvEvents snapshot: {sum(len(b.events) for b in snap)} cached blocks")
    seqs = [b.sequence_number for b in live]
    ok &= check(len(seqs) >= 3 and seqs == list(range(seqs[0], seqs[0] + len(seqs)))
                and seqs[0] == snap[-1].sequence_number + 1,
                f"{protocol} SubscribeKvEvents live sequence numbers consecutive after the snapshot: {seqs[:6]}...")
    stored = [e.stored for b in live for e in b.events if e.WhichOneof("data") == "stored"]
    ok &= check(stored and all(len(blk.token_ids) == 4 and blk.block_size == 4 for s in stored for blk in s.blocks)
                and any(s.HasField("parent_block_hash") for s in stored),
                f"{protocol} stored events: {len(stored)} with token ids, block size and parents")
    return ok


def main():
    ok = True
    for protocol in ("vllm", "sglang"):
        proc, target = start_mock(protocol)
        try:
            with grpc.insecure_channel(target) as ch:
                if protocol == "vllm":
                    r, gen = run_vllm(ch)
                    ok &= r
                else:
                    gen = sglang_gen(ch)
                ok &= run_kv_events(ch, protocol, gen)
        finally:
            proc.stdin.close()
            proc.wait(timeout=5)
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
