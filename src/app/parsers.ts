// Startup check of the output-parser names given on the command line, against the
// native parser registry: an unknown name is an error listing the valid names, never a
// silent fallback.

import { reasoningParserNames, toolParserNames } from '../native/parsers.js';

function check(flag: string, name: string | undefined, valid: readonly string[]): void {
  if (name === undefined || valid.includes(name)) return;
  throw new Error(`${flag}: unknown parser \`${name}\` (valid names: ${valid.join(', ')})`);
}

export function checkParserNames(toolCall: string | undefined, reasoning: string | undefined): void {
  check('--tool-call-parser', toolCall, toolParserNames());
  check('--reasoning-parser', reasoning, reasoningParserNames());
}
