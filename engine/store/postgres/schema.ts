import type { Pool } from 'pg';
import { JOBS_MIGRATION } from './jobs';

/**
 * The schema, as versioned migrations. Each runs once, in its own transaction, in order; start-up
 * runs the missing ones under an advisory lock, so nodes starting together do not race. A node
 * refuses a database whose schema is newer than it knows (an older islet must not write to it).
 * Every table is prefixed `islet_`, so islet can share a database with others.
 */
export const MIGRATIONS: { version: number; name: string; sql: string }[] = [
  {
    version: 1,
    name: 'accounts, keys, bundles, versions, functions',
    sql: `
      CREATE TABLE islet_accounts (
        id text PRIMARY KEY,
        created_at timestamptz NOT NULL
      );
      CREATE TABLE islet_keys (
        account_id text NOT NULL REFERENCES islet_accounts (id) ON DELETE CASCADE,
        id text NOT NULL,
        name text NOT NULL,
        scope text NOT NULL CHECK (scope IN ('admin', 'invoke')),
        sha256 text NOT NULL,
        created_at timestamptz NOT NULL,
        revoked_at timestamptz,
        PRIMARY KEY (account_id, id)
      );
      -- Deployed code, stored once per content (the manifest's contentHash): a tar.gz of the files.
      CREATE TABLE islet_bundles (
        hash text PRIMARY KEY,
        data bytea NOT NULL,
        bytes bigint NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      );
      -- Immutable versions; a manifest never changes once written.
      CREATE TABLE islet_versions (
        account_id text NOT NULL,
        function_name text NOT NULL,
        version text NOT NULL,
        manifest jsonb NOT NULL,
        bundle_hash text NOT NULL REFERENCES islet_bundles (hash),
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (account_id, function_name, version)
      );
      -- Which versions serve, with their shares: [{"version", "percent"}].
      CREATE TABLE islet_functions (
        account_id text NOT NULL REFERENCES islet_accounts (id) ON DELETE CASCADE,
        name text NOT NULL,
        traffic jsonb NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (account_id, name)
      );
    `,
  },
  {
    version: 2,
    name: 'nodes (for logs across nodes)',
    sql: `
      CREATE TABLE islet_nodes (
        id text PRIMARY KEY,
        url text NOT NULL,
        started_at timestamptz NOT NULL DEFAULT now(),
        seen_at timestamptz NOT NULL DEFAULT now()
      );
    `,
  },
  {
    version: 3,
    name: 'numbered versions, the latest number per function, key last use, account limits',
    sql: `
      -- Versions are numbered 1, 2, 3… per function; ids given before are renumbered in deploy order.
      ALTER TABLE islet_versions ADD COLUMN number integer;
      UPDATE islet_versions v SET number = r.n FROM (
          SELECT account_id, function_name, version,
            row_number() OVER (PARTITION BY account_id, function_name ORDER BY created_at, version) AS n
          FROM islet_versions) r
        WHERE v.account_id = r.account_id AND v.function_name = r.function_name AND v.version = r.version;
      UPDATE islet_functions f SET traffic = coalesce((
          SELECT jsonb_agg(jsonb_build_object('version', v.number, 'percent', s.share->'percent'))
          FROM jsonb_array_elements(f.traffic) AS s(share)
          JOIN islet_versions v ON v.account_id = f.account_id AND v.function_name = f.name AND v.version = s.share->>'version'), '[]');
      UPDATE islet_versions SET manifest = jsonb_set(manifest, '{version}', to_jsonb(number));
      ALTER TABLE islet_versions DROP CONSTRAINT islet_versions_pkey;
      ALTER TABLE islet_versions DROP COLUMN version;
      ALTER TABLE islet_versions RENAME COLUMN number TO version;
      ALTER TABLE islet_versions ALTER COLUMN version SET NOT NULL;
      ALTER TABLE islet_versions ADD PRIMARY KEY (account_id, function_name, version);
      -- The highest number given so far: kept when that version is pruned, so numbers never repeat.
      ALTER TABLE islet_functions ADD COLUMN latest integer NOT NULL DEFAULT 0;
      UPDATE islet_functions f SET latest = coalesce((SELECT max(v.version) FROM islet_versions v WHERE v.account_id = f.account_id AND v.function_name = f.name), 0);
      ALTER TABLE islet_keys ADD COLUMN last_used_at timestamptz;
      -- An account's own limits ({"maxInFlight", "ratePerSec", "burst"}); null: the server's.
      ALTER TABLE islet_accounts ADD COLUMN limits jsonb;
    `,
  },
  { version: 4, name: 'asynchronous invocations, schedule ticks', sql: JOBS_MIGRATION },
];

/** An arbitrary constant: the advisory lock that serialises migrations across nodes. */
const MIGRATION_LOCK = 73_100_615;

export async function migrate(pool: Pool): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    try {
      await client.query('CREATE TABLE IF NOT EXISTS islet_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())');
      const applied = new Set<number>((await client.query<{ version: number }>('SELECT version FROM islet_migrations')).rows.map((r) => r.version));
      const newest = Math.max(0, ...applied);
      const known = MIGRATIONS[MIGRATIONS.length - 1]!.version;
      if (newest > known) throw new Error(`the database schema is at version ${newest}, newer than this islet knows (${known}): upgrade islet`);
      for (const migration of MIGRATIONS) {
        if (applied.has(migration.version)) continue;
        await client.query('BEGIN');
        try {
          await client.query(migration.sql);
          await client.query('INSERT INTO islet_migrations (version, name) VALUES ($1, $2)', [migration.version, migration.name]);
          await client.query('COMMIT');
        } catch (err) {
          await client.query('ROLLBACK');
          throw new Error(`migration ${migration.version} (${migration.name}) failed: ${(err as Error).message}`);
        }
      }
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}
