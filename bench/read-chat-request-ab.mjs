// CPU per readChatRequest of a small chat body in one build directory (bench/RESULTS.md, "continue_final_message, nvext shapes"):
// node bench/read-chat-request-ab.mjs <dir>; run it for two builds in turn to compare.
const dir = process.argv[2];
const { readChatRequest } = await import(`${dir}/dist/src/protocol/chat-request.js`);
const body = Buffer.from(JSON.stringify({ model: 'models', messages: [{ role: 'user', content: 'Hello there, how are you today?' }], max_tokens: 1 }));
const h = () => '';
for (let i = 0; i < 50000; i++) readChatRequest(body, false, h);
const N = 300000;
const t0 = process.cpuUsage();
for (let i = 0; i < N; i++) readChatRequest(body, false, h);
const t = process.cpuUsage(t0);
console.log(dir, ((t.user + t.system) / N).toFixed(3), 'µs per readChatRequest');
