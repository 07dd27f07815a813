package pgvector

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/recrawl/recrawl/index"
)

// migrationLock is the advisory lock key that serialises migrations of
// every index in a database ("recrawl-index" as a number).
const migrationLock int64 = 0x7265637261776c69

// migration is one versioned step of an index's table. Its SQL names the
// table as {table}, its name as {name} and the dimensions as {dims}.
type migration struct {
	version int
	sql     string
}

// migrations are applied in order, each once per table; an applied
// migration is never edited, a change is a new one.
var migrations = []migration{
	{1, `CREATE TABLE {table} (
		id text COLLATE "C" PRIMARY KEY,
		embedding vector({dims}) NOT NULL,
		metadata jsonb NOT NULL DEFAULT '{}',
		text text NOT NULL DEFAULT ''
	)`},
	{2, `CREATE INDEX {name}_embedding ON {table} USING hnsw (embedding vector_cosine_ops)`},
	{3, `CREATE INDEX {name}_metadata ON {table} USING gin (metadata jsonb_path_ops)`},
}

// migrate brings the table of the index up to the latest migration, under
// an advisory lock so that concurrent Opens apply each step once, and
// checks that an existing table has the requested dimensions.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema, name string, dims int) error {
	table := pgx.Identifier{schema, name}.Sanitize()
	log := pgx.Identifier{schema, "recrawl_index_migrations"}.Sanitize()
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS vector`); err != nil {
			var pe *pgconn.PgError
			if errors.As(err, &pe) && pe.Code == "0A000" { // feature_not_supported: no control file
				return fmt.Errorf("%w: %v", errNoExtension, err)
			}
			return fmt.Errorf("creating the vector extension: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
			return fmt.Errorf("creating schema %s: %w", schema, err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+log+` (
			index_table text NOT NULL,
			version int NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now(),
			PRIMARY KEY (index_table, version)
		)`); err != nil {
			return fmt.Errorf("creating %s: %w", log, err)
		}
		var applied int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+log+` WHERE index_table = $1`, name).Scan(&applied); err != nil {
			return fmt.Errorf("reading %s: %w", log, err)
		}
		if applied > len(migrations) {
			return fmt.Errorf("%s is at migration %d, newer than this recrawl knows (%d): upgrade recrawl", table, applied, len(migrations))
		}
		for _, m := range migrations[applied:] {
			sql := strings.NewReplacer("{table}", table, "{name}", name, "{dims}", fmt.Sprint(dims)).Replace(m.sql)
			if _, err := tx.Exec(ctx, sql); err != nil {
				return fmt.Errorf("migration %d of %s: %w", m.version, table, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+log+` (index_table, version) VALUES ($1, $2)`, name, m.version); err != nil {
				return fmt.Errorf("recording migration %d of %s: %w", m.version, table, err)
			}
		}
		var have int
		err := tx.QueryRow(ctx, `SELECT atttypmod FROM pg_attribute WHERE attrelid = $1::regclass AND attname = 'embedding'`, table).Scan(&have)
		if err != nil {
			return fmt.Errorf("reading the dimensions of %s: %w", table, err)
		}
		if have != dims {
			return fmt.Errorf("%s: %w", table, &index.DimensionError{Want: have, Got: dims})
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, errNoExtension) {
			return err
		}
		return fmt.Errorf("pgvector: migrating %s: %w", table, err)
	}
	return nil
}
