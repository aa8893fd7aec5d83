// The JSON schema tool_choice required / named sends to the engine (src/protocol/tool-choice-schema.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toolChoiceConstraint } from '../src/protocol/tool-choice-schema.js';
import { ApiError } from '../src/protocol/errors.js';

const ADDRESS = { type: 'object', properties: { city: { type: 'string' } } };
const TOOLS = JSON.stringify([
  { type: 'function', function: { name: 'ship', parameters: { type: 'object', properties: { to: { $ref: '#/$defs/Address' } }, $defs: { Address: ADDRESS } } } },
  { type: 'function', function: { name: 'bill', parameters: { type: 'object', properties: { at: { $ref: '#/$defs/Address' } }, $defs: { Address: ADDRESS } } } },
  { type: 'function', function: { name: 'ping' } },
]);

const schema = (c: ReturnType<typeof toolChoiceConstraint>) => {
  assert.equal(c?.kind, 'json_schema');
  return JSON.parse(c!.value) as Record<string, any>;
};

test('auto and none do not constrain', () => {
  assert.equal(toolChoiceConstraint(TOOLS, { kind: 'auto' }, true), undefined);
  assert.equal(toolChoiceConstraint(TOOLS, { kind: 'none' }, true), undefined);
});

test('required: one anyOf branch per tool, $defs shared at the root, missing parameters = empty object', () => {
  const s = schema(toolChoiceConstraint(TOOLS, { kind: 'required' }, true));
  assert.equal(s.type, 'array');
  assert.equal(s.minItems, 1);
  assert.equal(s.maxItems, undefined);
  assert.deepEqual(s.$defs, { Address: ADDRESS });
  assert.deepEqual(s.items.anyOf.map((b: any) => b.properties.name.enum), [['ship'], ['bill'], ['ping']]);
  assert.deepEqual(s.items.anyOf[0].properties.parameters, { type: 'object', properties: { to: { $ref: '#/$defs/Address' } } });
  assert.deepEqual(s.items.anyOf[2].properties.parameters, { type: 'object', properties: {} });
  assert.ok(s.items.anyOf.every((b: any) => b.required.join() === 'name,parameters'));
  assert.equal(schema(toolChoiceConstraint(TOOLS, { kind: 'required' }, false)).maxItems, 1, 'parallel_tool_calls false: one call');
});

test('named: the tool\'s parameters, with its $defs', () => {
  assert.deepEqual(schema(toolChoiceConstraint(TOOLS, { kind: 'named', name: 'bill' }, true)), {
    type: 'object',
    properties: { at: { $ref: '#/$defs/Address' } },
    $defs: { Address: ADDRESS },
  });
  assert.deepEqual(schema(toolChoiceConstraint(TOOLS, { kind: 'named', name: 'ping' }, true)), { type: 'object', properties: {} });
});

test('conflicting $defs are a 400 naming the definition', () => {
  const bad = JSON.stringify([
    { type: 'function', function: { name: 'a', parameters: { $defs: { X: { type: 'string' } } } } },
    { type: 'function', function: { name: 'b', parameters: { $defs: { X: { type: 'number' } } } } },
  ]);
  assert.throws(() => toolChoiceConstraint(bad, { kind: 'required' }, true), (e: unknown) => e instanceof ApiError && e.status === 400 && /`\$defs\.X` of `b`/.test(e.message));
});
