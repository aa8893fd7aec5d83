// A varied, non-repeating text of about N tokens for encode benches: this repository's docs,
// template fixtures and sources (prose, code, JSON, CJK and emoji) concatenated until they
// encode to more than N tokens, then cut to exactly N tokens and decoded back.

import { readdirSync, readFileSync, statSync } from 'node:fs';

const ROOT = new URL('../../', import.meta.url).pathname;
const SOURCES = ['docs', 'test/fixtures/templates', 'src/api', 'src/protocol', 'native/core/src'];

export interface TextModel {
  encode(text: string, addSpecialTokens: boolean): Uint32Array;
  decode(ids: Uint32Array, skipSpecialTokens: boolean): string;
}

function files(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir).sort()) {
    const p = `${dir}/${name}`;
    if (statSync(p).isDirectory()) files(p, out);
    else if (/\.(md|ts|rs|json|txt)$/.test(name)) out.push(p);
  }
  return out;
}

export function variedText(model: TextModel, tokens: number): string {
  let text = '';
  outer: for (const d of SOURCES) {
    for (const f of files(`${ROOT}${d}`)) {
      text += readFileSync(f, 'utf8');
      if (model.encode(text, false).length > tokens) break outer;
    }
  }
  return model.decode(model.encode(text, false).subarray(0, tokens), false);
}
