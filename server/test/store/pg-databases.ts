import pg from 'pg';
import type { StoreConfig } from '../../src/store/index.ts';

/**
 * Throwaway databases on the test PostgreSQL (STAGEDIFF_TEST_DATABASE_URL): one per fresh store,
 * dropped at teardown, so reruns start clean.
 */
export class PgTestDatabases {
  private admin: pg.Client | null = null;
  private readonly created: string[] = [];
  private n = 0;
  private readonly run = `${process.pid}_${Date.now().toString(36)}`;

  constructor(
    private readonly adminUrl: string,
    private readonly tag: string,
  ) {}

  async setup(): Promise<void> {
    this.admin = new pg.Client({ connectionString: this.adminUrl });
    await this.admin.connect();
  }

  /** The URL of a new, empty database. */
  async fresh(): Promise<string> {
    const db = `stagediff_${this.tag}_${this.run}_${this.n++}`;
    await this.admin!.query(`CREATE DATABASE ${db}`);
    this.created.push(db);
    const u = new URL(this.adminUrl);
    u.pathname = `/${db}`;
    return u.toString();
  }

  /** Runs one query on the database of `config`. */
  async query<R extends pg.QueryResultRow>(config: StoreConfig, sql: string, params: unknown[] = []): Promise<R[]> {
    const c = new pg.Client({ connectionString: config.databaseUrl });
    await c.connect();
    try {
      return (await c.query<R>(sql, params)).rows;
    } finally {
      await c.end();
    }
  }

  async rawComparisonRow(config: StoreConfig, id: string): Promise<string> {
    return JSON.stringify((await this.query(config, 'SELECT * FROM comparisons WHERE id = $1', [id]))[0]);
  }

  async teardown(): Promise<void> {
    for (const db of this.created.splice(0)) await this.admin!.query(`DROP DATABASE IF EXISTS ${db} WITH (FORCE)`);
    await this.admin?.end();
  }
}
