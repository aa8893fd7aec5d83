// Unit tests of Fields (src/protocol/fields.ts): typed lookups of one object level as the
// gate scanned it. A body of a few members is searched by a walk over its records, one of
// many members through a table-wide index; both must answer alike, JSON.parse's way.
// Run: npx tsc -p tsconfig.json && node --test dist/test/fields.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';

import { FieldTable, Fields } from '../src/protocol/fields.js';

const NAMES = Array.from({ length: 24 }, (_, i) => `f${i}`);
const table = new FieldTable(NAMES as readonly string[]);

/** A body with `count` known members f0.., then `extra` appended verbatim. */
function body(count: number, extra = ''): Buffer {
  const members = Array.from({ length: count }, (_, i) => `"f${i}":${i}`);
  return Buffer.from(`{${members.join(',')}${extra}}`);
}

for (const count of [3, 16, 17, 24]) {
  test(`${count} members: every member found, the last of a repeated key wins, absent ones absent`, () => {
    const f = Fields.scan(body(count, `,"f1":"again","zz":true`), table);
    assert.equal(f.count, count + 2);
    for (let i = 0; i < count; i++) if (i !== 1) assert.equal(f.number(`f${i}`), i, `f${i}`);
    assert.equal(f.string('f1'), 'again', 'the later f1 wins, as with JSON.parse');
    assert.equal(JSON.parse(body(count, `,"f1":"again"`).toString()).f1, 'again');
    for (let i = count; i < NAMES.length; i++) {
      if (i === 1) continue;
      assert.equal(f.has(`f${i}`), false, `f${i} absent`);
      assert.equal(f.number(`f${i}`), undefined);
    }
    assert.deepEqual(f.unknown, ['zz']);
  });
}

test('a wrong type names the member, past the walk as below it', () => {
  for (const count of [2, 20]) {
    const f = Fields.scan(body(count, ',"f0":"text"'), table);
    assert.throws(() => f.number('f0'), /`f0` must be a number/);
  }
});

test('null reads as not given, on both paths', () => {
  for (const count of [2, 20]) {
    const f = Fields.scan(body(count, ',"f0":null'), table);
    assert.equal(f.has('f0'), true);
    assert.equal(f.given('f0'), false);
    assert.equal(f.number('f0'), undefined);
  }
});
