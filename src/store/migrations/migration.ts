// One numbered schema migration, its SQL per dialect (applied by ./index.ts's runner).

export interface Migration {
  version: number;
  name: string;
  sqlite: string;
  postgres: string;
}
