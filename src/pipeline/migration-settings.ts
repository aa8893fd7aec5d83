// Request migration's per-model settings (--migration-limit, --migration-max-seq-len; src/pipeline/migration.ts).

export interface MigrationSettings {
  /** Migrations one request may make (0: off). */
  limit: number;
  /** Prompt plus generated tokens past which a request's ids are no longer kept (0: no bound). */
  maxSeqLen: number;
}

export const DEFAULT_MIGRATION: MigrationSettings = { limit: 3, maxSeqLen: 32768 };
