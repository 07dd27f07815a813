package crawlstate

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// RecordRun implements State.
func (s *SQLite) RecordRun(ctx context.Context, source string, start time.Time) error {
	const op = "record run"
	switch {
	case source == "":
		return errors.New("crawlstate: record run: empty source name")
	case start.IsZero():
		return fmt.Errorf("crawlstate: record run of %q: zero start time; pass the run's start", source)
	}
	return s.withTx(ctx, op, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO runs (source, start) VALUES (?, ?) ON CONFLICT DO NOTHING`, source, encTime(start)); err != nil {
			return fmt.Errorf("crawlstate: %s %q: %w", op, source, err)
		}
		if _, err := tx.ExecContext(ctx, `
DELETE FROM runs WHERE source = :source AND start < (
	SELECT start FROM runs WHERE source = :source ORDER BY start DESC LIMIT 1 OFFSET :keep)`,
			sql.Named("source", source), sql.Named("keep", KeepRuns-1)); err != nil {
			return fmt.Errorf("crawlstate: %s %q: trim: %w", op, source, err)
		}
		return nil
	})
}

// Runs implements State.
func (s *SQLite) Runs(ctx context.Context, source string, limit int) ([]time.Time, error) {
	if limit < 1 {
		return nil, fmt.Errorf("crawlstate: runs of %q: limit %d; it must be at least 1", source, limit)
	}
	rows, err := s.r.QueryContext(ctx,
		`SELECT start FROM runs WHERE source = ? ORDER BY start DESC LIMIT ?`, source, limit)
	if err != nil {
		return nil, fmt.Errorf("crawlstate: runs of %q: %w", source, err)
	}
	defer rows.Close()
	out := []time.Time{}
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, fmt.Errorf("crawlstate: runs of %q: %w", source, err)
		}
		out = append(out, decTime(v))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("crawlstate: runs of %q: %w", source, err)
	}
	return out, nil
}
