#!/usr/bin/env node
// The portico command: runs the compiled CLI (npm install builds it into dist/).
import { main } from '../dist/src/cli/main.js';

const code = await main(process.argv.slice(2));
if (code !== 0) process.exit(code);
