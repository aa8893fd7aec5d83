// The per-choice native object (ChoiceOutput: detokenizer, stop jail, parsers in one push per
// engine message): its result encoding (a string for content while the choice goes on, else
// [over, kind, ...fields]), the end on a stop, the finish flush, and the parser hand-over.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Model, newChoiceOutput, newSequence } from '../src/native/core.js';
import { OutputParser, decodeDeltas } from '../src/native/parsers.js';
import { QWEN3 } from './helpers/portico.js';

const model = Model.load(QWEN3);

test('content while the choice goes on comes back as one string per push', () => {
  const ids = Array.from(model.encode('Hello there, world', false));
  const c = newChoiceOutput(model, {}, null);
  let text = '';
  for (const id of ids) {
    const r = c.pushToken(id);
    assert.equal(typeof r, 'string');
    text += r as string;
  }
  const end = c.finish();
  assert.equal(end[0], 1, 'finish() ends the choice');
  text += decodeDeltas(end.slice(1)).map((d) => ('text' in d ? d.text : '')).join('');
  assert.equal(text, 'Hello there, world');
  assert.equal(c.generatedTokens, ids.length);
  assert.equal(c.finishReason, null, 'the engine ended it, not Portico');
  assert.deepEqual(c.finish(), [1], 'nothing after the end');
});

test('a stop string ends the choice on that push: [1, ...deltas], the same text as a Sequence', () => {
  const ids = Array.from(model.encode('one two STOP three', false));
  const c = newChoiceOutput(model, { stop: ['STOP'] }, null);
  const seq = newSequence(model, { stop: ['STOP'] });
  let fused = '';
  let plain = '';
  let over = false;
  for (const id of ids) {
    const r = c.pushToken(id);
    const s = seq.pushToken(id);
    plain += typeof s === 'string' ? s : s[0];
    if (typeof r === 'string') fused += r;
    else {
      assert.equal(r[0], 1);
      over = true;
      fused += decodeDeltas(r.slice(1)).map((d) => ('text' in d ? d.text : '')).join('');
      break;
    }
  }
  assert.ok(over);
  assert.equal(fused, plain);
  assert.equal(fused, 'one two ');
  assert.equal(c.finishReason, 'stop');
  assert.equal(c.matchedStop, 'STOP');
  assert.deepEqual(c.pushTokens([1, 2]), [1], 'pushes after the end release nothing');
});

test('with a parser: reasoning and tool calls in the same push, finish reason data, and the parser is taken over', () => {
  const text = '<think>plan</think>Sure. <tool_call>\n{"name": "get_weather", "arguments": {"city": "Paris"}}\n</tool_call>';
  const ids = Array.from(model.encode(text, false));
  const parser = new OutputParser('hermes', 'qwen3', { idSeed: 1 });
  const c = newChoiceOutput(model, { skipSpecialTokens: false }, parser.handOver());
  assert.throws(() => parser.push('x'), /handed to a ChoiceOutput/);
  const deltas = [];
  const r = c.pushTokens(ids);
  assert.notEqual(typeof r, 'string');
  deltas.push(...decodeDeltas((r as (string | number)[]).slice(1)));
  deltas.push(...decodeDeltas(c.finish().slice(1)));
  assert.equal(deltas.filter((d) => d.kind === 'reasoning').map((d) => ('text' in d ? d.text : '')).join(''), 'plan');
  const start = deltas.find((d) => d.kind === 'tool_start');
  assert.ok(start && start.kind === 'tool_start' && start.name === 'get_weather');
  const args = deltas.filter((d) => d.kind === 'tool_args').map((d) => ('text' in d ? d.text : '')).join('');
  assert.deepEqual(JSON.parse(args), { city: 'Paris' });
  assert.equal(c.toolCallCount, 1);
  // The same native parser cannot be handed over twice.
  assert.throws(() => newChoiceOutput(model, {}, parser.handOver()), /already handed/);
  // Still usable after that error.
  assert.equal(typeof newChoiceOutput(model, {}, null).pushToken(ids[0]!), 'string');
});

test('bad arguments are TypeErrors naming ChoiceOutput', () => {
  assert.throws(() => newChoiceOutput({} as never, {}, null), { name: 'TypeError', message: 'ChoiceOutput: the first argument must be a Model' });
  assert.throws(() => newChoiceOutput(model, { stop: [1] as never }, null), { name: 'TypeError', message: 'ChoiceOutput: stop must be an array of strings or null' });
  assert.throws(() => newChoiceOutput(model, {}, {} as never), { name: 'TypeError', message: 'ChoiceOutput: parser must be an OutputParser or null' });
});
