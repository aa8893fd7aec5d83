// Waiting for a custom chat processor (test/fixtures/processors/rules.mjs) to serve: its factory
// runs once the model has a worker, and until then the model answers 503 model_not_ready. The
// rules processor's `card` command touches no engine, so asking it routes nothing and draws
// nothing from a rate-limit budget.

import { eventually } from './eventually.js';

export async function processorReady(url: string, model: string): Promise<void> {
  await eventually(async () => {
    const r = await fetch(`${url}/v1/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ model, messages: [{ role: 'user', content: 'card' }] }) });
    await r.body?.cancel();
    return r.status === 200;
  }, 'the chat processor is ready');
}
