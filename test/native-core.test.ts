// The native core through its N-API surface, with the real Qwen3 tokenizer: what the
// request path relies on (spans in, ids out, streaming text never split mid-character).

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Model, Detokenizer, newSequence, type Sequence } from '../src/native/core.js';
import { QWEN3 } from './helpers/portico.js';

const model = Model.load(QWEN3);
const TEXTS = ['plain ASCII text.', '中文和日本語のテキスト', 'emoji 👨‍👩‍👧‍👦 🇫🇷 🦀', 'code: fn main() { println!("hi\\n"); }'];

test('model info comes from the folder', () => {
  const info = model.info();
  assert.ok(info.eosTokenIds.includes(151645), 'Qwen3 ends turns with <|im_end|> (151645)');
  assert.ok(info.vocabSize > 150_000);
  assert.equal(info.hasChatTemplate, true);
});

test('model info maps the special tokens to their ids', () => {
  const info = model.info();
  // Qwen3's tokenizer_config.json: bos_token null, eos <|im_end|>, pad <|endoftext|>, unk null.
  assert.equal(info.bosToken, null);
  assert.equal(info.bosTokenId, null);
  assert.equal(info.eosToken, '<|im_end|>');
  assert.equal(info.eosTokenId, 151645);
  assert.equal(info.padToken, '<|endoftext|>');
  assert.equal(info.padTokenId, 151643);
  assert.equal(info.unkToken, null);
  assert.equal(info.unkTokenId, null);
  assert.deepEqual(
    info.specialTokens.find((t) => t.name === 'eos_token'),
    { name: 'eos_token', content: '<|im_end|>', id: 151645 },
  );
  assert.equal(info.additionalSpecialTokens.length, 13);
  assert.deepEqual(info.additionalSpecialTokens[0], { name: '<|im_start|>', content: '<|im_start|>', id: 151644 });
  for (const t of info.additionalSpecialTokens) assert.equal(model.tokenToId(t.content), t.id);
});

test('encode then decode gives the text back', () => {
  for (const t of TEXTS) assert.equal(model.decode(model.encode(t, false), false), t);
});

test('the detokenizer streams exactly the full decode, one token at a time, with no replacement chars', () => {
  for (const t of TEXTS) {
    const ids = model.encode(t, false);
    const d = new Detokenizer(model, true);
    let out = '';
    for (const id of ids) {
      const piece = d.push(Uint32Array.of(id));
      assert.ok(!piece.includes('\uFFFD'), `no half character in ${JSON.stringify(piece)}`);
      out += piece;
    }
    out += d.finish();
    assert.equal(out, t);
  }
});

test('encodeChat reads messages from a span of the body', () => {
  const prefix = '{"model":"m","messages":';
  const messages = '[{"role":"user","content":"Hi"}]';
  const body = Buffer.from(`${prefix}${messages}}`);
  const ids = model.encodeChat(body, prefix.length, prefix.length + messages.length, -1, -1, true, null);
  assert.equal(model.decode(ids, false), '<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');
});

test('encodeChatAsync gives the same ids as encodeChat', async () => {
  const messages = Buffer.from(JSON.stringify([{ role: 'user', content: 'long '.repeat(2000) }]));
  const sync = model.encodeChat(messages, 0, messages.length, -1, -1, true, '{"enable_thinking":false}');
  const async_ = await model.encodeChatAsync(messages, 0, messages.length, -1, -1, true, '{"enable_thinking":false}');
  assert.deepEqual(async_, sync);
});

test('encodeChat after a cached long system prompt equals a cold encode, also when the prompt differs by one byte', () => {
  // A system prompt with added-token text inside, so the prompt splits in many pieces.
  const system = 'Rules: answer briefly. <think>plan</think> <tool_call>x</tool_call> 日本語 🦊\n'.repeat(200);
  const body = (sys: string, user: string) =>
    Buffer.from(JSON.stringify([{ role: 'system', content: sys }, { role: 'user', content: user }]));
  const chat = (b: Buffer) => model.encodeChat(b, 0, b.length, -1, -1, true, null);
  const cold = (b: Buffer) => {
    model.clearPrefixCache();
    return chat(b);
  };
  const variants = [
    body(system, 'Question 2?'),
    body(`${system.slice(0, 9000)}X${system.slice(9001)}`, 'Question 1?'),
    body(`${system.slice(0, 9000)}<|im_end|>${system.slice(9000)}`, 'Question 1?'),
    body(system.slice(0, -1), 'Question 1?'),
    body(`${system}<`, 'Question 1?'),
  ];
  for (const v of variants) {
    const expected = cold(v);
    model.clearPrefixCache();
    chat(body(system, 'Question 1?'));
    const hitsBefore = model.prefixCacheStats().hits;
    assert.deepEqual(chat(v), expected);
    assert.ok(model.prefixCacheStats().hits > hitsBefore);
  }
});

test('a long conversation sent again with new turns gives the ids of a cold call, and a bad tail after the reused messages fails as a cold call', () => {
  // Qwen3 keeps the reasoning of assistant turns after the last user query only, so the
  // render of earlier turns changes when a user turn is added: ids must follow.
  const system = 'Rules: answer briefly, "quote" \\ path\n\t日本語 🦊 <think>x</think>\n'.repeat(150);
  const turns: object[] = [
    { role: 'system', content: system },
    { role: 'user', content: 'Find the bug.' },
    { role: 'assistant', content: 'Looking.', reasoning_content: 'First read the file.' },
    { role: 'tool', content: '{"ok": true}', tool_call_id: 'c1' },
    {
      role: 'assistant',
      content: '',
      reasoning_content: 'Call the tool.',
      tool_calls: [{ id: 'c2', type: 'function', function: { name: 'read', arguments: '{"path": "a.ts"}' } }],
    },
    { role: 'user', content: 'And now?' },
    { role: 'assistant', content: '<think>\nthink more\n</think>\n\nDone.' },
    { role: 'user', content: 'Thanks.' },
  ];
  const chat = (b: Buffer) => model.encodeChat(b, 0, b.length, -1, -1, true, null);
  const cold = (b: Buffer) => {
    model.clearPrefixCache();
    return chat(b);
  };
  const body = (n: number) => Buffer.from(JSON.stringify(turns.slice(0, n)));
  const warm: Uint32Array[] = [];
  model.clearPrefixCache();
  for (let n = 1; n <= turns.length; n++) warm.push(chat(body(n)));
  for (let n = 1; n <= turns.length; n++) assert.deepEqual(warm[n - 1], cold(body(n)), `${n} messages`);
  const head = JSON.stringify(turns.slice(0, 3)).slice(0, -1);
  const failure = (b: Buffer) => {
    try {
      chat(b);
    } catch (err) {
      return `${(err as { code?: string }).code}: ${(err as Error).message}`;
    }
    return 'no error';
  };
  for (const tail of [',]', ']x', ',3]', ',{"role":"user","content":}]', ',{"role":"user","content":[{"type":"image_url"}]}]', ',']) {
    const bad = Buffer.from(head + tail);
    model.clearPrefixCache();
    const want = failure(bad);
    assert.notEqual(want, 'no error', tail);
    chat(body(3));
    assert.equal(failure(bad), want, tail);
    assert.deepEqual(chat(body(3)), warm[2]);
  }
});

test('a bad messages span is a client error (InvalidArg) with a position', () => {
  const body = Buffer.from('[{"role":"user","content":]');
  assert.throws(
    () => model.encodeChat(body, 0, body.length, -1, -1, true, null),
    (err: Error & { code?: string }) => err.code === 'InvalidArg' && /line 1 column \d+/.test(err.message),
  );
});

test('a folder that is not a model is a clear error naming it', () => {
  assert.throws(() => Model.load('/nonexistent/dir'), /not a model folder: \/nonexistent\/dir/);
});

const IM_END = 151645;

/** Pushes one id at a time (pushToken, the server's path); the pieces, then finish()'s. */
function streamAll(seq: Sequence, ids: Uint32Array): string[] {
  const pieces: string[] = [];
  let ended = false;
  for (const id of ids) {
    const r = seq.pushToken(id);
    // A string while running, [text] from the push that ended the sequence on.
    assert.equal(typeof r !== 'string', seq.finished, 'the return value tells whether the sequence finished');
    if (ended) assert.deepEqual(r, [''], 'nothing is released after the end');
    ended = seq.finished;
    pieces.push(typeof r === 'string' ? r : r[0]);
  }
  pieces.push(seq.finish());
  return pieces;
}

/** The same stream through push(Uint32Array), one id per call. */
function streamAllTyped(seq: Sequence, ids: Uint32Array): string[] {
  const pieces: string[] = [];
  for (const id of ids) pieces.push(seq.push(Uint32Array.of(id)));
  pieces.push(seq.finish());
  return pieces;
}

test('Sequence: a stop string is held back across tokens, then cut; matchedStop names it', () => {
  const ids = model.encode('The answer is 42.</answer> trailing', false);
  const seq = newSequence(model, { stop: ['</answer>'] });
  const pieces = streamAll(seq, ids);
  let seen = '';
  for (const p of pieces) {
    seen += p;
    assert.ok(!seen.includes('</'), `partial stop string leaked: ${JSON.stringify(seen)}`);
  }
  assert.equal(seen, 'The answer is 42.');
  assert.equal(seq.finished, true);
  assert.equal(seq.finishReason, 'stop');
  assert.equal(seq.matchedStop, '</answer>');
});

test('Sequence: EOS is hidden and ends with stop (matchedStop null); request stop ids report the id', () => {
  const ids = Uint32Array.from([...model.encode('Hi there', false), IM_END, ...model.encode(' more', false)]);
  const eos = newSequence(model, { skipSpecialTokens: false });
  assert.equal(streamAll(eos, ids).join(''), 'Hi there');
  assert.deepEqual([eos.finishReason, eos.matchedStop, eos.generatedTokens], ['stop', null, 3]);

  const stopId = model.encode(' there', false)[0]!;
  const byId = newSequence(model, { stopTokenIds: [stopId], includeStopStrInOutput: true });
  assert.equal(streamAll(byId, ids).join(''), 'Hi there');
  assert.equal(byId.matchedStop, stopId);

  const ignore = newSequence(model, { ignoreEos: true });
  assert.equal(streamAll(ignore, ids).join(''), 'Hi there more');
  assert.equal(ignore.finishReason, null);
});

test('Sequence: maxTokens ends with length and releases a partial stop string; finish() after a partial releases it', () => {
  const ids = model.encode('one two <st', false);
  const seq = newSequence(model, { stop: ['<stop>'], maxTokens: ids.length });
  assert.equal(streamAll(seq, ids).join(''), 'one two <st');
  assert.equal(seq.finishReason, 'length');
  const open = newSequence(model, { stop: ['<stop>'] });
  const pieces = streamAll(open, ids);
  assert.equal(pieces.at(-1), '<st');
  assert.equal(open.finishReason, null, 'the engine ended it: use the engine reason');
});

test('Sequence: minTokens ignores stops before it', () => {
  const ids = Uint32Array.from([...model.encode('a', false), IM_END, ...model.encode(' b', false), IM_END]);
  const seq = newSequence(model, { minTokens: 2 });
  assert.equal(streamAll(seq, ids).join(''), 'a b');
  assert.equal(seq.generatedTokens, 4);
});

test('Sequence: pushToken, pushTokens and push(Uint32Array) release the same text and end the same way', () => {
  const text = 'Think: 東京 🚀 café</answer> tail <|im_end|> after';
  const ids = Uint32Array.from([...model.encode(text, false), IM_END, ...model.encode(' more', false)]);
  const cases = [
    {},
    { skipSpecialTokens: false, ignoreEos: true },
    { stop: ['</answer>', 'Obs'], includeStopStrInOutput: true },
    { stop: ['</answer>'] },
    { stopTokenIds: [IM_END], ignoreEos: true, includeStopStrInOutput: true, skipSpecialTokens: false },
    { maxTokens: 5 },
    { minTokens: 100, stop: ['</answer>'] },
  ];
  for (const opts of cases) {
    const byToken = newSequence(model, opts);
    const typed = newSequence(model, opts);
    const tokenPieces = streamAll(byToken, ids);
    assert.deepEqual(tokenPieces, streamAllTyped(typed, ids), JSON.stringify(opts));
    // Chunks of three ids through pushTokens (a plain number array).
    const chunked = newSequence(model, opts);
    let out = '';
    for (let i = 0; i < ids.length; i += 3) {
      const r = chunked.pushTokens(Array.from(ids.subarray(i, i + 3)));
      out += typeof r === 'string' ? r : r[0];
    }
    out += chunked.finish();
    assert.equal(out, tokenPieces.join(''), JSON.stringify(opts));
    for (const s of [byToken, chunked]) {
      assert.deepEqual([s.finished, s.finishReason, s.matchedStop, s.generatedTokens], [typed.finished, typed.finishReason, typed.matchedStop, typed.generatedTokens], JSON.stringify(opts));
    }
  }
  // Without stops the stream is exactly the full decode.
  const plain = newSequence(model, { skipSpecialTokens: false, ignoreEos: true });
  assert.equal(streamAll(plain, ids).join(''), model.decode(ids, false));
});

test('Sequence: pushToken / pushTokens reject a wrong receiver or argument, and the sequence keeps working', () => {
  const seq = newSequence(model, {});
  const notASequence = [{}, model, new Detokenizer(model, true), null];
  // V8 rejects a foreign receiver itself ("Illegal invocation") where Node checks the class
  // signature; the native type-tag check covers runtimes that do not.
  const wrongReceiver = { name: 'TypeError', message: /Illegal invocation|Sequence method called on an object that is not a Sequence/ };
  for (const recv of notASequence) {
    assert.throws(() => seq.pushToken.call(recv as never, 1), wrongReceiver);
    assert.throws(() => seq.pushTokens.call(recv as never, [1]), wrongReceiver);
  }
  assert.throws(() => seq.pushToken('12' as never), { name: 'TypeError', message: 'pushToken: the token id must be a number' });
  assert.throws(() => (seq.pushToken as (...a: unknown[]) => unknown)(), { name: 'TypeError', message: 'pushToken: the token id must be a number' });
  assert.throws(() => seq.pushTokens(Uint32Array.of(1) as never), { name: 'TypeError', message: 'pushTokens: the ids must be an array of numbers' });
  assert.throws(() => seq.pushTokens([1, 'x'] as never), { name: 'TypeError', message: 'pushTokens: the ids must be an array of numbers' });
  assert.throws(() => seq.push([1] as never), { name: 'TypeError', message: 'push: the ids must be a Uint32Array' });
  assert.throws(() => seq.push(Int32Array.of(1) as never), { name: 'TypeError', message: 'push: the ids must be a Uint32Array' });
  assert.throws(() => Object.getOwnPropertyDescriptor(Object.getPrototypeOf(seq), 'finished')!.get!.call({}), wrongReceiver);
  assert.throws(() => newSequence({} as never), { name: 'TypeError', message: 'Sequence: the first argument must be a Model' });
  assert.throws(() => newSequence(model, { stop: [1] as never }), { name: 'TypeError', message: 'Sequence: stop must be an array of strings or null' });
  assert.throws(() => newSequence(model, { stop: 'x' as never }), { name: 'TypeError', message: 'Sequence: stop must be an array of strings or null' });
  assert.throws(() => newSequence(model, { maxTokens: '5' as never }), { name: 'TypeError', message: 'Sequence: maxTokens must be a number or null' });
  assert.throws(() => newSequence(model, { stopTokenIds: [1, 'x'] as never }), { name: 'TypeError', message: 'Sequence: stopTokenIds must be an array of numbers or null' });
  assert.throws(() => newSequence(model, { stopTokenIds: Uint32Array.of(1) as never }), { name: 'TypeError', message: 'Sequence: stopTokenIds must be an array of numbers or null' });
  // The first refused option is the one reported.
  assert.throws(() => newSequence(model, { maxTokens: '5' as never, stop: [1] as never, stopTokenIds: ['x'] as never }), { name: 'TypeError', message: 'Sequence: maxTokens must be a number or null' });
  assert.throws(() => newSequence(model, { stop: [1] as never, stopTokenIds: ['x'] as never }), { name: 'TypeError', message: 'Sequence: stop must be an array of strings or null' });
  assert.throws(() => (seq.constructor as () => unknown)(), { name: 'TypeError', message: "Class constructor Sequence cannot be invoked without 'new'" });
  let out = '';
  for (const id of model.encode('still fine', false)) out += seq.pushToken(id) as string;
  assert.equal(out + seq.finish(), 'still fine');
  assert.equal(seq.generatedTokens, model.encode('still fine', false).length);
});
