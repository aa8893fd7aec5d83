"""Drive Portico's KServe v2 endpoint with Triton's own client (tritonclient.grpc), for
the real-engine suite: a unary text infer, a unary token-id infer and a stream of two
requests. Prints one JSON object with what came back; the calling test asserts on it.

    python kserve_client.py 127.0.0.1:PORT MODEL
"""

import json
import queue
import sys

import numpy as np
import tritonclient.grpc as tg

url, model = sys.argv[1], sys.argv[2]
c = tg.InferenceServerClient(url=url)


def inputs(*specs):
    out = []
    for name, dtype, value in specs:
        arr = np.array(value, dtype=np.object_ if dtype == "BYTES" else None)
        if dtype == "INT32":
            arr = arr.astype(np.int32)
        elif dtype == "BOOL":
            arr = arr.astype(np.bool_)
        t = tg.InferInput(name, list(arr.shape), dtype)
        t.set_data_from_numpy(arr)
        out.append(t)
    return out


def text(r):
    v = r.as_numpy("text_output")
    return b"".join(x if isinstance(x, bytes) else bytes(x) for x in v.flatten()).decode()


result = {"ready": c.is_model_ready(model)}
r = c.infer(model, inputs(("text_input", "BYTES", [b"Hello there, how are you today?"]), ("max_tokens", "INT32", [5])))
result["text"] = {"text": text(r), "finish_reason": r.as_numpy("finish_reason").flatten()[0].decode()}
r = c.infer(model, inputs(("input_ids", "INT32", [9707, 1052, 11]), ("max_tokens", "INT32", [4])))
result["ids"] = {"ids": r.as_numpy("output_ids").flatten().tolist(), "finish_reason": r.as_numpy("finish_reason").flatten()[0].decode()}

got = queue.Queue()
c.start_stream(callback=lambda result, error: got.put((result, error)))
c.async_stream_infer(model, inputs(("text_input", "BYTES", [b"Tell me a story"]), ("max_tokens", "INT32", [6]), ("stream", "BOOL", [True])), request_id="s1")
c.async_stream_infer(model, inputs(("text_input", "BYTES", [b"Another one"]), ("max_tokens", "INT32", [3])), request_id="s2")
stream = {"s1": [], "s2": []}
errors = []
finished = set()
while len(finished) < 2:
    res, err = got.get(timeout=60)
    if err is not None:
        errors.append(str(err))
        break
    rid = res.get_response().id
    reason = res.as_numpy("finish_reason")
    if res.as_numpy("text_output") is not None:
        stream[rid].append(text(res))
    if reason is not None:
        stream[rid + "_finish"] = reason.flatten()[0].decode()
        finished.add(rid)
c.stop_stream()
result["stream"] = {"chunks": stream, "errors": errors}
print(json.dumps(result))
