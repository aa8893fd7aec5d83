// One numbered schema migration (./index.ts lists them in order), its SQL per dialect.

export interface Migration {
  version: number;
  name: string;
  sqlite: string;
  postgres: string;
}
