package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
)

// Links implements State.
func (s *State) Links(ctx context.Context, source, u string) ([]string, error) {
	const op = "links"
	var b []byte
	err := s.r.QueryRowContext(ctx, `SELECT links FROM links WHERE source = ? AND url = ?`, source, u).Scan(&b)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, s.mustExist(ctx, op, source, u)
	}
	if err != nil {
		return nil, fmt.Errorf("crawlstate: %s of %q in source %q: %w", op, u, source, err)
	}
	links, err := decodeLinks(b)
	if err != nil {
		return nil, fmt.Errorf("crawlstate: %s of %q in source %q: %w", op, u, source, err)
	}
	return links, nil
}

// Chunks implements State.
func (s *State) Chunks(ctx context.Context, source, u string) ([]crawlstate.Chunk, error) {
	const op = "chunks"
	rows, err := s.r.QueryContext(ctx, `
SELECT ordinal, text_hash, record_id, heading_path, start_byte, end_byte, text
FROM chunks WHERE source = ? AND url = ? ORDER BY ordinal`, source, u)
	if err != nil {
		return nil, fmt.Errorf("crawlstate: %s of %q in source %q: %w", op, u, source, err)
	}
	defer rows.Close()
	var out []crawlstate.Chunk
	for rows.Next() {
		var c crawlstate.Chunk
		if err := rows.Scan(&c.Ordinal, &c.TextHash, &c.RecordID, &c.HeadingPath, &c.Start, &c.End, &c.Text); err != nil {
			return nil, fmt.Errorf("crawlstate: %s of %q in source %q: %w", op, u, source, err)
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("crawlstate: %s of %q in source %q: %w", op, u, source, err)
	}
	if out == nil {
		return nil, s.mustExist(ctx, op, source, u)
	}
	return out, nil
}

// mustExist returns nil when the row exists and an error wrapping
// ErrNotFound when it does not. Rows are never deleted, so checking after
// a lookup that found nothing beside the row is consistent.
func (s *State) mustExist(ctx context.Context, op, source, u string) error {
	var one int
	err := s.r.QueryRowContext(ctx, `SELECT 1 FROM pages WHERE source = ? AND url = ?`, source, u).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return check.NoSuchURL(op, source, u)
	}
	if err != nil {
		return fmt.Errorf("crawlstate: %s of %q in source %q: %w", op, u, source, err)
	}
	return nil
}

// vectorsPerQuery is how many text hashes one lookup statement of Vectors
// carries (well below SQLite's limit of 32766 parameters).
const vectorsPerQuery = 500

// vectorsSQL returns the lookup of n text hashes of one model; its
// arguments are the model, then the hashes. Each hash is a probe of the
// primary key.
func vectorsSQL(n int) string {
	return `SELECT text_hash, vector FROM vectors WHERE model = ? AND text_hash IN (?` +
		strings.Repeat(", ?", n-1) + `)`
}

// Vectors implements State: the hashes, without duplicates, are looked up
// vectorsPerQuery at a time with one prepared statement. An empty model
// is an error.
func (s *State) Vectors(ctx context.Context, model string, textHashes []string) (map[string][]float32, error) {
	const op = "vectors"
	if err := check.Vectors(op, model, nil); err != nil {
		return nil, err
	}
	hashes := slices.Clone(textHashes)
	slices.Sort(hashes)
	hashes = slices.Compact(hashes)
	out := make(map[string][]float32, len(hashes))
	if len(hashes) == 0 {
		return out, ctx.Err()
	}

	var full *sql.Stmt
	if len(hashes) >= vectorsPerQuery {
		var err error
		if full, err = s.r.PrepareContext(ctx, vectorsSQL(vectorsPerQuery)); err != nil {
			return nil, fmt.Errorf("crawlstate: %s: prepare: %w", op, err)
		}
		defer full.Close()
	}
	args := make([]any, 0, 1+vectorsPerQuery)
	for len(hashes) > 0 {
		batch := hashes[:min(len(hashes), vectorsPerQuery)]
		hashes = hashes[len(batch):]
		args = append(args[:0], model)
		for _, h := range batch {
			args = append(args, h)
		}
		var (
			rows *sql.Rows
			err  error
		)
		if len(batch) == vectorsPerQuery {
			rows, err = full.QueryContext(ctx, args...)
		} else {
			rows, err = s.r.QueryContext(ctx, vectorsSQL(len(batch)), args...)
		}
		if err != nil {
			return nil, fmt.Errorf("crawlstate: %s of model %q: %w", op, model, err)
		}
		if err := scanVectors(rows, out); err != nil {
			return nil, fmt.Errorf("crawlstate: %s of model %q: %w", op, model, err)
		}
	}
	return out, nil
}

// scanVectors reads (text_hash, vector) rows into out and closes rows.
func scanVectors(rows *sql.Rows, out map[string][]float32) error {
	defer rows.Close()
	for rows.Next() {
		var h string
		var b []byte
		if err := rows.Scan(&h, &b); err != nil {
			return err
		}
		v, err := backend.DecodeVector(b)
		if err != nil {
			return fmt.Errorf("text hash %s: %w", h, err)
		}
		out[h] = v
	}
	return rows.Err()
}

const putVectorSQL = `
INSERT INTO vectors (model, text_hash, vector) VALUES (?, ?, ?)
ON CONFLICT (model, text_hash) DO UPDATE SET vector = excluded.vector`

// PutVectors implements State: one transaction, one prepared upsert, the
// hashes in sorted order. An empty model, text hash or vector is an error,
// and then nothing is stored.
func (s *State) PutVectors(ctx context.Context, model string, vectors map[string][]float32) error {
	const op = "put vectors"
	if err := check.Vectors(op, model, vectors); err != nil {
		return err
	}
	if len(vectors) == 0 {
		return ctx.Err()
	}
	hashes := slices.Sorted(maps.Keys(vectors))
	return s.withTx(ctx, op, func(tx *sql.Tx) error {
		ps := s.txStmts(tx)
		defer ps.close()
		for _, h := range hashes {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("crawlstate: %s: %w", op, err)
			}
			if _, err := ps.exec(ctx, putVectorSQL, model, h, backend.EncodeVector(vectors[h])); err != nil {
				return fmt.Errorf("crawlstate: %s of model %q, text hash %s: %w", op, model, h, err)
			}
		}
		return nil
	})
}
