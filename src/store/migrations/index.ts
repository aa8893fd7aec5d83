// The store's schema, as numbered migrations applied in order and recorded in
// portico_schema_migrations (version, applied_at). A migration is never edited once
// released: a change is a new file with the next number. Each names its SQL per dialect
// where they differ.

import { m001 } from './001-responses.js';
import type { Migration } from './migration.js';

export type { Migration } from './migration.js';

export const MIGRATIONS: readonly Migration[] = [m001];
