// The NATS servers of `--event-plane nats://HOST:PORT[,HOST:PORT]`, as the client takes
// them (HOST:PORT each).

export function natsServers(raw: string): string[] {
  const m = /^nats:\/\/(.+)$/i.exec(raw.trim());
  if (!m) throw new Error(`--event-plane must be nats://HOST:PORT[,HOST:PORT], got '${raw}'`);
  return m[1]!.split(',').map((hp) => {
    const a = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9._-]+):([0-9]{1,5})\/?$/.exec(hp.trim());
    const port = a ? Number(a[2]) : 0;
    if (!a || port < 1 || port > 65535) throw new Error(`--event-plane: '${hp}' is not HOST:PORT`);
    return `${a[1]}:${port}`;
  });
}
