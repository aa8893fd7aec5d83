// A bounded streamed-chat load from raw sockets, for measuring a running frontend from outside
// (CPU from /proc, syscalls with `strace -c`): C keep-alive connections each make R streamed
// chats of T tokens in turn, to 127.0.0.1 only. Prints the streams made and the client's reads.
//
// Usage: npm run build:ts && node dist/bench/stream-client.js <port> [connections=16] [per-connection=25] [tokens=64]

import net from 'node:net';

const port = Number(process.argv[2]);
const conns = Number(process.argv[3] ?? 16);
const perConn = Number(process.argv[4] ?? 25);
const tokens = Number(process.argv[5] ?? 64);
const payload = JSON.stringify({ model: 'models', messages: [{ role: 'user', content: 'Hello there, how are you today?' }], max_tokens: tokens, stream: true });
const req = `POST /v1/chat/completions HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(payload)}\r\n\r\n${payload}`;
let reads = 0;

async function connection(): Promise<void> {
  const sock = net.connect(port, '127.0.0.1');
  await new Promise<void>((r) => sock.once('connect', () => r()));
  for (let i = 0; i < perConn; i++) {
    await new Promise<void>((resolve) => {
      let seen = '';
      const on = (d: Buffer) => {
        reads++;
        seen += d.toString('latin1');
        // The chunked stream's end: [DONE], then the zero-length chunk.
        if (seen.includes('data: [DONE]') && seen.endsWith('0\r\n\r\n')) {
          sock.off('data', on);
          resolve();
        }
      };
      sock.on('data', on);
      sock.write(req);
    });
  }
  sock.destroy();
}

const t0 = performance.now();
await Promise.all(Array.from({ length: conns }, connection));
console.log(JSON.stringify({ streams: conns * perConn, clientReads: reads, ms: Math.round(performance.now() - t0) }));
