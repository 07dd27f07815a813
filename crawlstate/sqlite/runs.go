package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
)

// RecordRun implements State.
func (s *State) RecordRun(ctx context.Context, source string, start time.Time) error {
	const op = "record run"
	if err := check.Run(op, source, start); err != nil {
		return err
	}
	return s.withTx(ctx, op, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx,
			`INSERT INTO runs (source, start) VALUES (?, ?) ON CONFLICT DO NOTHING`, source, backend.EncTime(start)); err != nil {
			return fmt.Errorf("crawlstate: %s %q: %w", op, source, err)
		}
		if _, err := tx.ExecContext(ctx, `
DELETE FROM runs WHERE source = :source AND start < (
	SELECT start FROM runs WHERE source = :source ORDER BY start DESC LIMIT 1 OFFSET :keep)`,
			sql.Named("source", source), sql.Named("keep", crawlstate.KeepRuns-1)); err != nil {
			return fmt.Errorf("crawlstate: %s %q: trim: %w", op, source, err)
		}
		return nil
	})
}

// Runs implements State.
func (s *State) Runs(ctx context.Context, source string, limit int) ([]time.Time, error) {
	if err := check.Limit("runs", limit); err != nil {
		return nil, err
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
		out = append(out, backend.DecTime(v))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("crawlstate: runs of %q: %w", source, err)
	}
	return out, nil
}

// LastModTrust implements State.
func (s *State) LastModTrust(ctx context.Context, source string) (crawlstate.LastModCounts, error) {
	if err := check.Source("lastmod trust", source); err != nil {
		return crawlstate.LastModCounts{}, err
	}
	var c crawlstate.LastModCounts
	err := s.r.QueryRowContext(ctx,
		`SELECT moved_changed, moved_same, still_changed, still_same FROM lastmod_trust WHERE source = ?`, source).
		Scan(&c.MovedChanged, &c.MovedSame, &c.StillChanged, &c.StillSame)
	if errors.Is(err, sql.ErrNoRows) {
		return crawlstate.LastModCounts{}, nil
	}
	if err != nil {
		return crawlstate.LastModCounts{}, fmt.Errorf("crawlstate: lastmod trust of %q: %w", source, err)
	}
	return c, nil
}

// AddLastModTrust implements State.
func (s *State) AddLastModTrust(ctx context.Context, source string, d crawlstate.LastModCounts, keep float64) error {
	const op = "add lastmod trust"
	if err := check.Trust(source, d, keep); err != nil {
		return err
	}
	return s.withTx(ctx, op, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `
INSERT INTO lastmod_trust (source, moved_changed, moved_same, still_changed, still_same) VALUES (?, ?, ?, ?, ?)
ON CONFLICT (source) DO UPDATE SET
	moved_changed = moved_changed + excluded.moved_changed,
	moved_same    = moved_same + excluded.moved_same,
	still_changed = still_changed + excluded.still_changed,
	still_same    = still_same + excluded.still_same`,
			source, d.MovedChanged, d.MovedSame, d.StillChanged, d.StillSame); err != nil {
			return fmt.Errorf("crawlstate: %s of %q: %w", op, source, err)
		}
		if keep <= 0 {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `
UPDATE lastmod_trust SET
	moved_changed = moved_changed * :k / (moved_changed + moved_same + still_changed + still_same),
	moved_same    = moved_same    * :k / (moved_changed + moved_same + still_changed + still_same),
	still_changed = still_changed * :k / (moved_changed + moved_same + still_changed + still_same),
	still_same    = still_same    * :k / (moved_changed + moved_same + still_changed + still_same)
WHERE source = :source AND moved_changed + moved_same + still_changed + still_same > :k`,
			sql.Named("k", keep), sql.Named("source", source)); err != nil {
			return fmt.Errorf("crawlstate: %s of %q: scale: %w", op, source, err)
		}
		return nil
	})
}
