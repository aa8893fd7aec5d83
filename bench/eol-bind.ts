// Bench-only (`node --import dist/bench/eol-bind.js ...`): installs Portico's lean
// AsyncResource#bind (src/runtime/lean-async-bind.ts: Node's bind as it is since DEP0172
// reached End-of-Life, without the deprecated accessor pair Node 20 builds on every bind)
// in a process that is not Portico, e.g. the floor app, whose node:http2 client binds once
// per stream. Portico's serve installs it by itself.

import { installLeanAsyncBind } from '../src/runtime/lean-async-bind.js';

installLeanAsyncBind();
