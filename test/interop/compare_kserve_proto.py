"""Wire check of proto/kserve/ against the published KServe v2 / Triton descriptor.

The `tritonclient[grpc]` wheel carries the generated `service_pb2` and
`model_config_pb2` modules, whose FileDescriptors are the published
grpc_service.proto and model_config.proto (package `inference`). Portico's own
proto/kserve/*.proto are built with `buf build` and compared with them:

- every message and enum Portico declares exists upstream under the same full name;
- every field has the same name, number, type, label, message/enum type and oneof;
- messages Portico declares whole have exactly the upstream fields; the ModelConfig
  family (SUBSET below) may leave fields out (a client reads them as defaults);
- enums have the same values; every rpc Portico declares exists upstream with the
  same request and response types and streaming flags.

    python3 test/interop/compare_kserve_proto.py
Prints one PASS/FAIL line per message, enum and rpc; exit status 0 when all pass.
"""
import os
import subprocess
import sys
import tempfile

from google.protobuf import descriptor_pb2
from tritonclient.grpc import model_config_pb2, service_pb2

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUF = os.path.join(ROOT, "node_modules", ".bin", "buf")

# Declared with only the fields Portico sets.
SUBSET = {".inference.ModelConfig", ".inference.ModelInput", ".inference.ModelOutput"}


def ours():
    out = os.path.join(tempfile.mkdtemp(), "image.binpb")
    subprocess.run([BUF, "build", os.path.join(ROOT, "proto"), "--path", os.path.join(ROOT, "proto", "kserve"),
                    "--exclude-source-info", "--exclude-imports", "-o", out], check=True)
    fds = descriptor_pb2.FileDescriptorSet()
    with open(out, "rb") as f:
        fds.ParseFromString(f.read())
    return list(fds.file)


def theirs():
    files = []
    for mod in (service_pb2, model_config_pb2):
        p = descriptor_pb2.FileDescriptorProto()
        mod.DESCRIPTOR.CopyToProto(p)
        files.append(p)
    return files


def collect(files):
    messages, enums, rpcs = {}, {}, {}

    def walk(prefix, msg):
        name = f"{prefix}.{msg.name}"
        messages[name] = msg
        for n in msg.nested_type:
            walk(name, n)
        for e in msg.enum_type:
            enums[f"{name}.{e.name}"] = e

    for f in files:
        pkg = "." + f.package
        for m in f.message_type:
            walk(pkg, m)
        for e in f.enum_type:
            enums[f"{pkg}.{e.name}"] = e
        for s in f.service:
            for m in s.method:
                rpcs[f"{pkg}.{s.name}/{m.name}"] = m
    return messages, enums, rpcs


def field_key(msg, f):
    oneof = msg.oneof_decl[f.oneof_index].name if f.HasField("oneof_index") else None
    return (f.name, f.number, f.type, f.label, f.type_name, oneof)


def main():
    om, oe, orpc = collect(ours())
    tm, te, trpc = collect(theirs())
    ok = True

    def report(good, what, why=""):
        nonlocal ok
        print(("PASS " if good else "FAIL ") + what + ("" if good else f": {why}"))
        ok = ok and good

    for name, msg in sorted(om.items()):
        up = tm.get(name)
        if up is None:
            report(False, name, "no such message upstream")
            continue
        mine = {f.number: field_key(msg, f) for f in msg.field}
        pub = {f.number: field_key(up, f) for f in up.field}
        wrong = [f"{mine[n]} != {pub.get(n)}" for n in mine if mine[n] != pub.get(n)]
        missing = [] if name in SUBSET else [pub[n] for n in pub if n not in mine]
        map_entry = msg.options.map_entry == up.options.map_entry
        report(not wrong and not missing and map_entry, name, f"differs {wrong}, missing {missing}, map_entry {map_entry}")
    for name, e in sorted(oe.items()):
        up = te.get(name)
        same = up is not None and sorted((v.name, v.number) for v in e.value) == sorted((v.name, v.number) for v in up.value)
        report(same, f"enum {name}", "values differ or missing upstream")
    for name, m in sorted(orpc.items()):
        up = trpc.get(name)
        same = up is not None and (m.input_type, m.output_type, m.client_streaming, m.server_streaming) == (up.input_type, up.output_type, up.client_streaming, up.server_streaming)
        report(same, f"rpc {name}", "types or streaming differ, or missing upstream")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
