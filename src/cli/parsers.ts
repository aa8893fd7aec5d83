// Startup check of the output-parser names given on the command line. No parser is
// built yet, so any name is an error that says so, never a silent fallback.

const TOOL_CALL_PARSERS: readonly string[] = [];
const REASONING_PARSERS: readonly string[] = [];

function check(flag: string, name: string | undefined, valid: readonly string[]): void {
  if (name === undefined || valid.includes(name)) return;
  const list = valid.length ? `valid names: ${valid.join(', ')}` : 'no parsers of this kind are available in this build yet';
  throw new Error(`${flag}: unknown parser \`${name}\` (${list})`);
}

export function checkParserNames(toolCall: string | undefined, reasoning: string | undefined): void {
  check('--tool-call-parser', toolCall, TOOL_CALL_PARSERS);
  check('--reasoning-parser', reasoning, REASONING_PARSERS);
}
