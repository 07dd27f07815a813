package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrationLock is the advisory lock key that serialises migrations of
// every crawl state in a database ("recrawlS" as a number).
const migrationLock int64 = 0x7265637261776c53

// migrationsTable records the migrations applied to a schema.
const migrationsTable = "recrawl_state_migrations"

// migration is one versioned step of the schema. Its SQL names the schema
// as {s}.
type migration struct {
	version int
	sql     string
}

// migrations are applied in order, each once per schema; an applied
// migration is never edited, a change is a new one. Text keys use the "C"
// collation, so URLs sort by bytes, as Go compares strings. Times are
// int64 Unix nanoseconds, the zero time the smallest int64.
var migrations = []migration{
	{1, `
CREATE TABLE {s}.pages (
	source          text COLLATE "C" NOT NULL,
	url             text COLLATE "C" NOT NULL,
	original_url    text NOT NULL DEFAULT '',
	first_seen      bigint NOT NULL,
	last_seen       bigint NOT NULL,
	last_fetched    bigint NOT NULL DEFAULT -9223372036854775808,
	next_check      bigint NOT NULL DEFAULT -9223372036854775808,
	interval_ns     bigint NOT NULL DEFAULT 0,
	content_hash    text NOT NULL DEFAULT '',
	etag            text NOT NULL DEFAULT '',
	last_modified   text NOT NULL DEFAULT '',
	sitemap_lastmod bigint NOT NULL DEFAULT -9223372036854775808,
	missing_runs    integer NOT NULL DEFAULT 0,
	gone            boolean NOT NULL DEFAULT false,
	visits          integer NOT NULL DEFAULT 0,
	changes         integer NOT NULL DEFAULT 0,
	failures        integer NOT NULL DEFAULT 0,
	last_error      text NOT NULL DEFAULT '',
	last_stage      text NOT NULL DEFAULT '',
	last_failure    bigint NOT NULL DEFAULT -9223372036854775808,
	title           text NOT NULL DEFAULT '',
	canonical       text NOT NULL DEFAULT '',
	alias_of        text NOT NULL DEFAULT '',
	listed_in       text COLLATE "C" NOT NULL DEFAULT '',
	excluded        text NOT NULL DEFAULT '',
	last_changed    bigint NOT NULL DEFAULT -9223372036854775808,
	elapsed_ns      bigint NOT NULL DEFAULT 0,
	recent          bytea,
	origin_modified bigint NOT NULL DEFAULT -9223372036854775808,
	change_rate     double precision NOT NULL DEFAULT 0,
	weight          double precision NOT NULL DEFAULT 0,
	offer_run       bigint,
	lease_owner     text,
	lease_expires   bigint,
	PRIMARY KEY (source, url)
);
CREATE INDEX pages_due ON {s}.pages (source, next_check, url) WHERE NOT gone;
CREATE INDEX pages_listed ON {s}.pages (source, listed_in);
CREATE INDEX pages_offered ON {s}.pages (source, offer_run, next_check, url) WHERE offer_run IS NOT NULL;
CREATE INDEX pages_leased ON {s}.pages (source, lease_owner) WHERE lease_owner IS NOT NULL;
CREATE INDEX pages_failing ON {s}.pages (source, failures) WHERE failures > 0;

CREATE TABLE {s}.links (
	source text COLLATE "C" NOT NULL,
	url    text COLLATE "C" NOT NULL,
	links  text[] NOT NULL,
	PRIMARY KEY (source, url)
);
CREATE TABLE {s}.chunks (
	source       text COLLATE "C" NOT NULL,
	url          text COLLATE "C" NOT NULL,
	ordinal      integer NOT NULL,
	text_hash    text NOT NULL,
	record_id    text NOT NULL,
	heading_path text NOT NULL,
	start_byte   integer NOT NULL,
	end_byte     integer NOT NULL,
	text         text NOT NULL,
	PRIMARY KEY (source, url, ordinal)
);
CREATE TABLE {s}.vectors (
	model     text COLLATE "C" NOT NULL,
	text_hash text COLLATE "C" NOT NULL,
	vector    bytea NOT NULL,
	PRIMARY KEY (model, text_hash)
);
CREATE TABLE {s}.alerts (
	id            text COLLATE "C" PRIMARY KEY,
	source        text COLLATE "C" NOT NULL,
	url           text NOT NULL,
	kind          text NOT NULL,
	created_at    bigint NOT NULL,
	payload       bytea NOT NULL,
	delivered_at  bigint NOT NULL DEFAULT -9223372036854775808,
	attempts      integer NOT NULL DEFAULT 0,
	last_error    text NOT NULL DEFAULT '',
	last_attempt  bigint NOT NULL DEFAULT -9223372036854775808,
	lease_owner   text,
	lease_expires bigint
);
CREATE INDEX alerts_pending ON {s}.alerts (source, created_at, id) WHERE delivered_at = -9223372036854775808;
CREATE TABLE {s}.documents (
	source         text COLLATE "C" NOT NULL,
	url            text COLLATE "C" NOT NULL,
	etag           text NOT NULL,
	last_modified  text NOT NULL,
	entries        integer NOT NULL,
	newest_lastmod bigint NOT NULL,
	listed_lastmod bigint NOT NULL,
	fetched_at     bigint NOT NULL,
	PRIMARY KEY (source, url)
);
CREATE TABLE {s}.events (
	id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	source  text COLLATE "C" NOT NULL,
	url     text COLLATE "C" NOT NULL,
	at      bigint NOT NULL,
	stage   text NOT NULL,
	attempt integer NOT NULL,
	ok      boolean NOT NULL,
	err     text NOT NULL,
	detail  text NOT NULL
);
CREATE INDEX events_page ON {s}.events (source, url, at, id);
CREATE TABLE {s}.run_locks (
	source      text COLLATE "C" PRIMARY KEY,
	owner       text NOT NULL,
	acquired_at bigint NOT NULL,
	expires_at  bigint NOT NULL
);
CREATE TABLE {s}.runs (
	source text COLLATE "C" NOT NULL,
	start  bigint NOT NULL,
	PRIMARY KEY (source, start)
);
CREATE TABLE {s}.lastmod_trust (
	source        text COLLATE "C" PRIMARY KEY,
	moved_changed double precision NOT NULL,
	moved_same    double precision NOT NULL,
	still_changed double precision NOT NULL,
	still_same    double precision NOT NULL
);`},
	// A document's seen_at is when TouchListed last vouched for its
	// listing (a 304): the rows it listed at its last full read count as
	// seen then, without a new version of each row (seenColumn).
	{2, `ALTER TABLE {s}.documents ADD COLUMN seen_at bigint NOT NULL DEFAULT 0;`},
}

// SchemaVersionError is the error of Open for a schema migrated by a newer
// recrawl than this build.
type SchemaVersionError struct {
	Schema string
	Have   int // the schema's latest applied migration
	Known  int // the latest migration this build knows
}

// Error describes the failure.
func (e *SchemaVersionError) Error() string {
	return fmt.Sprintf("crawlstate/postgres: schema %q is at migration %d, newer than this recrawl knows (%d): upgrade recrawl",
		e.Schema, e.Have, e.Known)
}

// migrate brings schema up to the latest of steps, in one transaction
// under an advisory lock so that concurrent Opens apply each step once.
func migrate(ctx context.Context, pool *pgxpool.Pool, schema string, steps []migration, log *slog.Logger) error {
	quoted := pgx.Identifier{schema}.Sanitize()
	table := pgx.Identifier{schema, migrationsTable}.Sanitize()
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLock); err != nil {
			return fmt.Errorf("advisory lock: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+quoted); err != nil {
			return fmt.Errorf("creating schema: %w", err)
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+table+` (
			version    integer PRIMARY KEY,
			applied_at timestamptz NOT NULL DEFAULT now()
		)`); err != nil {
			return fmt.Errorf("creating %s: %w", table, err)
		}
		var applied int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM `+table).Scan(&applied); err != nil {
			return fmt.Errorf("reading %s: %w", table, err)
		}
		if applied > len(steps) {
			return &SchemaVersionError{Schema: schema, Have: applied, Known: len(steps)}
		}
		for _, m := range steps[applied:] {
			if _, err := tx.Exec(ctx, replaceSchema(m.sql, quoted)); err != nil {
				return fmt.Errorf("migration %d: %w", m.version, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO `+table+` (version) VALUES ($1)`, m.version); err != nil {
				return fmt.Errorf("recording migration %d: %w", m.version, err)
			}
			log.Info("crawlstate/postgres: applied migration", "schema", schema, "version", m.version)
		}
		return nil
	})
	if err != nil {
		var ve *SchemaVersionError
		if errors.As(err, &ve) {
			return ve
		}
		return fmt.Errorf("crawlstate/postgres: migrating schema %q: %w", schema, err)
	}
	return nil
}

// replaceSchema puts the quoted schema name in place of {s}.
func replaceSchema(sql, quoted string) string { return strings.ReplaceAll(sql, "{s}", quoted) }
