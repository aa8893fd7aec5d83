// The etcd endpoints of `--discovery etcd://HOST:PORT[,HOST:PORT]`, as the etcd3
// client takes them (http://HOST:PORT each).

export function etcdEndpoints(raw: string): string[] {
  const m = /^etcd:\/\/(.+)$/i.exec(raw.trim());
  if (!m) throw new Error(`--discovery must be etcd://HOST:PORT[,HOST:PORT], got '${raw}'`);
  return m[1]!.split(',').map((hp) => {
    const a = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):([0-9]{1,5})\/?$/.exec(hp.trim());
    const port = a ? Number(a[2]) : 0;
    if (!a || port < 1 || port > 65535) throw new Error(`--discovery: '${hp}' is not HOST:PORT`);
    return `http://${a[1]}:${port}`;
  });
}
