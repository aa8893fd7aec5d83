// Migration 1: the responses table. `input` and `response` are JSON text (the input
// items and the response object, as returned to the client); `stored_at` (ms) is what the
// TTL and max-rows policy count from. Lookups are by (id, tenant); the chain walk follows
// previous_id; pruning scans stored_at.

import type { Migration } from './migration.js';

const TABLE = `
CREATE TABLE portico_responses (
  id          TEXT PRIMARY KEY,
  tenant      TEXT NOT NULL,
  model       TEXT NOT NULL,
  previous_id TEXT,
  stored_at   BIGINT NOT NULL,
  input       TEXT NOT NULL,
  response    TEXT NOT NULL
);
CREATE INDEX portico_responses_stored_at ON portico_responses (stored_at);
`;

export const m001: Migration = { version: 1, name: 'responses', sqlite: TABLE, postgres: TABLE };
