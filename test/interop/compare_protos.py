"""Wire check of proto/ against the PyPI smg-grpc-proto sources.

Builds both trees with `buf build --exclude-source-info` and compares the
descriptor sets after sorting (files by name, fields by number, everything
else by name), so only wire-relevant differences remain: packages, message
and enum names, field numbers, types, labels, oneofs, services and rpcs.

    python3 test/interop/compare_protos.py /path/to/site-packages/smg_grpc_proto/proto
(test/interop/run.sh passes the proto folder of the smg-grpc-proto it installs in its venv)

Exit status 0 = every file in proto/ matches its upstream twin.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUF = os.path.join(ROOT, "node_modules", ".bin", "buf")


def build(src_dir, names):
    tmp = tempfile.mkdtemp()
    for n in names:
        shutil.copy(os.path.join(src_dir, n), tmp)
    with open(os.path.join(tmp, "buf.yaml"), "w") as f:
        f.write("version: v2\n")
    out = os.path.join(tmp, "image.json")
    subprocess.run([BUF, "build", tmp, "--exclude-source-info", "-o", out], check=True)
    with open(out) as f:
        return json.load(f)


def canon(x):
    if isinstance(x, dict):
        return {k: canon(v) for k, v in x.items()}
    if isinstance(x, list):
        items = [canon(v) for v in x]
        if items and all(isinstance(v, dict) for v in items):
            key = "number" if all("number" in v for v in items) else "name"
            if all(key in v for v in items):
                items.sort(key=lambda v: v[key])
        return items
    return x


def main():
    upstream = sys.argv[1] if len(sys.argv) > 1 else "/tmp/smg/smg_grpc_proto/proto"
    names = sorted(n for n in os.listdir(os.path.join(ROOT, "proto")) if n.endswith(".proto"))
    ours = {f["name"]: canon(f) for f in build(os.path.join(ROOT, "proto"), names)["file"]}
    theirs = {f["name"]: canon(f) for f in build(upstream, names)["file"]}
    ok = True
    for n in names:
        same = json.dumps(ours[n], sort_keys=True) == json.dumps(theirs[n], sort_keys=True)
        print(("PASS " if same else "FAIL ") + n)
        ok = ok and same
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
