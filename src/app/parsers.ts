// Startup check of the output-parser names given on the command line or per model in the
// config, against the native parser registry: an unknown name is an error listing the
// valid names, never a silent fallback.

import { reasoningParserNames, toolParserNames } from '../native/parsers.js';

function check(flag: string, name: string | undefined, valid: readonly string[]): void {
  if (name === undefined || valid.includes(name)) return;
  throw new Error(`${flag}: unknown parser \`${name}\` (valid names: ${valid.join(', ')})`);
}

/** `where` prefixes the message (a model of the config form). */
export function checkParserNames(toolCall: string | undefined, reasoning: string | undefined, where = ''): void {
  check(`${where}--tool-call-parser`, toolCall, toolParserNames());
  check(`${where}--reasoning-parser`, reasoning, reasoningParserNames());
}
