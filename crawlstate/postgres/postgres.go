// Package postgres is a crawlstate State on PostgreSQL, for several engine
// processes that share one source's work (crawlstate.Sharer).
//
// Every table lives in one schema (WithSchema, default "public"), created
// if missing; the schema is versioned by migrations applied under an
// advisory lock, so concurrent Opens migrate once. Times are stored as
// int64 Unix nanoseconds (timestamptz keeps only microseconds): they
// round-trip exactly and come back in UTC, the zero time stays zero, and
// times outside the years 1678 to 2262 are clamped to that range, as the
// SQLite State does.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
)

// State is a crawlstate State in a PostgreSQL schema. It is safe for
// concurrent use, and several States (in several processes) may share one
// schema.
type State struct {
	pool   *pgxpool.Pool
	owned  bool // Close closes pool
	schema string
	repl   *strings.Replacer // {s} -> the quoted schema
	opts   crawlstate.Options
	log    *slog.Logger
}

// check checks the arguments of the State's calls and makes its errors.
const check = backend.Checker("crawlstate/postgres")

// Option configures Open and OpenPool.
type Option func(*config)

type config struct {
	opts   crawlstate.Options
	schema string
	log    *slog.Logger
}

// WithOptions sets the policies of the store.
func WithOptions(o crawlstate.Options) Option { return func(c *config) { c.opts = o } }

// WithSchema sets the schema that holds the tables (default "public"); it
// is created if missing.
func WithSchema(name string) Option { return func(c *config) { c.schema = name } }

// WithLogger sets the logger for migrations and run-lock takeovers
// (default: discard).
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.log = l } }

// Open connects to the database at dsn (a PostgreSQL URL or key=value
// string) and migrates the schema. Close closes the connection pool.
func Open(ctx context.Context, dsn string, opts ...Option) (*State, error) {
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: open: %w", err)
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: open: %w", err)
	}
	s, err := OpenPool(ctx, pool, opts...)
	if err != nil {
		pool.Close()
		return nil, err
	}
	s.owned = true
	return s, nil
}

// OpenPool is Open on a pool the caller owns: Close leaves it open.
func OpenPool(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*State, error) {
	cfg := config{schema: "public"}
	for _, o := range opts {
		o(&cfg)
	}
	if pool == nil {
		return nil, errors.New("crawlstate/postgres: open: nil pool")
	}
	if cfg.schema == "" {
		return nil, errors.New("crawlstate/postgres: open: empty schema name")
	}
	if cfg.log == nil {
		cfg.log = slog.New(slog.DiscardHandler)
	}
	s := &State{
		pool:   pool,
		schema: cfg.schema,
		repl:   strings.NewReplacer("{s}", pgx.Identifier{cfg.schema}.Sanitize()),
		opts:   cfg.opts,
		log:    cfg.log,
	}
	if err := migrate(ctx, pool, cfg.schema, migrations, cfg.log); err != nil {
		return nil, err
	}
	return s, nil
}

// Close closes the connection pool when Open made it.
func (s *State) Close() error {
	if s.owned {
		s.pool.Close()
	}
	return nil
}

// q returns query with {s} replaced by the store's schema.
func (s *State) q(query string) string { return s.repl.Replace(query) }

// withTx runs fn in a transaction and commits it, or rolls it back when fn
// or the commit fails.
func (s *State) withTx(ctx context.Context, op string, fn func(tx pgx.Tx) error) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("crawlstate/postgres: %s: begin: %w", op, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback(context.Background())
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("crawlstate/postgres: %s: commit: %w", op, err)
	}
	return nil
}

// checkSize is the stored size of one Check: elapsed and modified as
// little-endian int64, then one byte: changed in bit 0, the CoChance step
// (in 1/crawlstate.CoChanceSteps) in bits 1 to 7.
const checkSize = 17

// encodeChecks stores Stats.Recent; no checks are NULL.
func encodeChecks(cs []crawlstate.Check) []byte {
	if len(cs) == 0 {
		return nil
	}
	b := make([]byte, 0, len(cs)*checkSize)
	for _, c := range cs {
		b = appendInt64(b, int64(c.Elapsed))
		b = appendInt64(b, int64(c.Modified))
		last := crawlstate.CoChanceStep(c.CoChance) << 1
		if c.Changed {
			last |= 1
		}
		b = append(b, last)
	}
	return b
}

// decodeChecks is the inverse of encodeChecks.
func decodeChecks(b []byte) ([]crawlstate.Check, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if len(b)%checkSize != 0 {
		return nil, fmt.Errorf("%w: %d bytes of checks", backend.ErrCorrupt, len(b))
	}
	out := make([]crawlstate.Check, len(b)/checkSize)
	for i := range out {
		p := b[i*checkSize:]
		out[i] = crawlstate.Check{
			Elapsed:  time.Duration(readInt64(p)),
			Modified: time.Duration(readInt64(p[8:])),
			Changed:  p[16]&1 != 0,
			CoChance: float64(p[16]>>1) / crawlstate.CoChanceSteps,
		}
	}
	return out, nil
}

func appendInt64(b []byte, v int64) []byte {
	u := uint64(v)
	return append(b, byte(u), byte(u>>8), byte(u>>16), byte(u>>24), byte(u>>32), byte(u>>40), byte(u>>48), byte(u>>56))
}

func readInt64(p []byte) int64 {
	return int64(uint64(p[0]) | uint64(p[1])<<8 | uint64(p[2])<<16 | uint64(p[3])<<24 |
		uint64(p[4])<<32 | uint64(p[5])<<40 | uint64(p[6])<<48 | uint64(p[7])<<56)
}
