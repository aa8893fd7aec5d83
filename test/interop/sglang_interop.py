"""Wire check: Portico's mock engine against the reference Python stubs.

Uses the generated code of the PyPI package `smg-grpc-proto` (what SGLang's
gRPC worker and gateway are built from) with `grpcio` to call the mock's
Generate, HealthCheck, GetModelInfo, GetLoads and Abort.

    python -m venv /tmp/v && /tmp/v/bin/pip install smg-grpc-proto grpcio
    npm run build:ts            # the mock is started from dist/
    /tmp/v/bin/python test/interop/sglang_interop.py [--url host:port]

Without --url a mock engine is started with node and stopped at the end.
Exit status 0 = every check passed.
"""

import argparse
import os
import subprocess
import sys
import threading
import time

import grpc
from smg_grpc_proto import sglang_scheduler_pb2 as pb
from smg_grpc_proto import sglang_scheduler_pb2_grpc as pb_grpc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LAUNCH = """
import { startMockEngine } from './dist/src/mock/engine-server.js';
const m = await startMockEngine({ port: 0, mode: process.argv[1], eosTokenIds: [99], vocabSize: 100,
  servedModelName: 'interop', stepMs: 5, eosProbability: 0 });
console.log(m.port);
process.stdin.on('end', () => m.close().then(() => process.exit(0)));
process.stdin.resume();
"""


def start_mock(mode):
    proc = subprocess.Popen(
        ["node", "--input-type=module", "-e", LAUNCH, mode],
        cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    port = int(proc.stdout.readline())
    return proc, f"127.0.0.1:{port}"


def sampling(**kw):
    # Explicit engine defaults, as a real gateway sends them.
    base = dict(temperature=1.0, top_p=1.0, top_k=-1, repetition_penalty=1.0, n=1)
    base.update(kw)
    return pb.SamplingParams(**base)


def check(cond, what):
    print(("PASS " if cond else "FAIL ") + what)
    return bool(cond)


def run(target):
    ok = True
    with grpc.insecure_channel(target) as ch:
        stub = pb_grpc.SglangSchedulerStub(ch)

        h = stub.HealthCheck(pb.HealthCheckRequest(), timeout=5)
        ok &= check(h.healthy, f"HealthCheck healthy={h.healthy} message={h.message!r}")

        mi = stub.GetModelInfo(pb.GetModelInfoRequest(), timeout=5)
        ok &= check(mi.vocab_size == 100 and list(mi.eos_token_ids) == [99],
                    f"GetModelInfo served_model_name={mi.served_model_name!r} vocab={mi.vocab_size}")

        # Streaming echo-or-sim generate.
        req = pb.GenerateRequest(
            request_id="interop-1",
            tokenized=pb.TokenizedInput(original_text="hi", input_ids=[5, 6, 7, 8]),
            sampling_params=sampling(max_new_tokens=3),
            stream=True)
        chunks, completes = [], []
        for res in stub.Generate(req, timeout=10):
            kind = res.WhichOneof("response")
            (chunks if kind == "chunk" else completes).append(getattr(res, kind))
            assert res.request_id == "interop-1"
        toks = [t for c in chunks for t in c.token_ids]
        ok &= check(len(toks) == 3 and len(completes) == 1,
                    f"Generate stream: {len(chunks)} chunks, tokens={toks}")
        c = completes[0]
        ok &= check(c.finish_reason == "length" and c.prompt_tokens == 4 and c.completion_tokens == 3,
                    f"GenerateComplete finish={c.finish_reason} usage={c.prompt_tokens}/{c.completion_tokens}/{c.cached_tokens}")

        # Non-stream: one complete with every id.
        req2 = pb.GenerateRequest(
            request_id="interop-2", tokenized=pb.TokenizedInput(input_ids=[1, 2]),
            sampling_params=sampling(max_new_tokens=2), stream=False)
        res2 = list(stub.Generate(req2, timeout=10))
        ok &= check(len(res2) == 1 and res2[0].WhichOneof("response") == "complete"
                    and len(res2[0].complete.output_ids) == 2,
                    f"Generate non-stream: output_ids={list(res2[0].complete.output_ids)}")

        loads = stub.GetLoads(pb.GetLoadsRequest(include=["core"]), timeout=5)
        ok &= check(loads.dp_rank_count == 1 and len(loads.loads) == 1,
                    f"GetLoads running={loads.aggregate.total_running_reqs} waiting={loads.aggregate.total_waiting_reqs}")

        # Abort rpc against a long request: stream ends with finish "abort".
        req3 = pb.GenerateRequest(
            request_id="interop-3", tokenized=pb.TokenizedInput(input_ids=list(range(1, 60))),
            sampling_params=sampling(max_new_tokens=5000), stream=True)
        timer = threading.Timer(0.1, lambda: stub.Abort(pb.AbortRequest(request_id="interop-3", reason="test"), timeout=5))
        timer.start()
        last = None
        for res in stub.Generate(req3, timeout=10):
            last = res
        timer.join()
        ok &= check(last is not None and last.WhichOneof("response") == "complete"
                    and last.complete.finish_reason == "abort",
                    f"Abort: last finish={last.complete.finish_reason if last else None}")
    return ok


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", help="host:port of a running engine (default: start the mock)")
    ap.add_argument("--mode", default="sim", choices=["echo", "sim"])
    args = ap.parse_args()
    proc = None
    target = args.url
    if not target:
        proc, target = start_mock(args.mode)
    try:
        t0 = time.time()
        ok = run(target)
        print(f"{'OK' if ok else 'FAILED'} against {target} in {time.time() - t0:.2f}s")
        return 0 if ok else 1
    finally:
        if proc:
            proc.stdin.close()
            proc.wait(timeout=5)


if __name__ == "__main__":
    sys.exit(main())
