import { test } from 'node:test';
import assert from 'node:assert/strict';
import { jsonString } from '../src/protocol/json-text.js';
import { usageJson, usageOf } from '../src/protocol/chat-response.js';

test('jsonString gives the bytes JSON.stringify gives', () => {
  const cases = [
    '', 'a', 'chatcmpl-0123456789abcdef', 'Qwen/Qwen3-0.6B', 'stop', ' hello world ~', '"quoted"', 'back\\slash',
    'tab\there', 'new\nline', '\u0000', '\u001f', '\u007f', 'é', 'ü日本', '\ud800', 'x\udc00y', '😀', '</script>',
    'a'.repeat(256), 'a'.repeat(257), `${'a'.repeat(300)}"`, `${'b'.repeat(255)}\n`,
  ];
  for (const s of cases) assert.equal(jsonString(s), JSON.stringify(s), JSON.stringify(s));
  // Every single UTF-16 unit, on its own and inside plain text.
  for (let c = 0; c < 0x10000; c++) {
    const s = String.fromCharCode(c);
    assert.equal(jsonString(s), JSON.stringify(s));
    assert.equal(jsonString(`ab${s}cd`), JSON.stringify(`ab${s}cd`));
  }
});

test('usageJson gives the bytes JSON.stringify gives', () => {
  for (const [p, c, k] of [[0, 0, 0], [32, 1, 0], [4096, 8192, 1024], [2 ** 31, 2 ** 32, 7]] as const) {
    const u = usageOf(p, c, k);
    assert.equal(usageJson(u), JSON.stringify(u));
  }
});
