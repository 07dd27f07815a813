package postgres

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
)

// Lock implements crawlstate.State. The lock row is read FOR UPDATE, so
// concurrent Locks of one source queue on it; a missing row is inserted,
// and a Lock that loses that insert to another reads the row again.
func (s *State) Lock(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) error {
	const op = "lock"
	if err := check.Lease(op, source, owner, ttl); err != nil {
		return err
	}
	for {
		inserted := false
		err := s.withTx(ctx, op, func(tx pgx.Tx) error {
			held, err := backend.ScanLock(tx.QueryRow(ctx, s.q(`SELECT `+backend.LockColumns+` FROM {s}.run_locks WHERE source = $1 FOR UPDATE`), source))
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				tag, err := tx.Exec(ctx, s.q(`INSERT INTO {s}.run_locks (source, owner, acquired_at, expires_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (source) DO NOTHING`), source, owner, backend.EncTime(now), backend.EncTime(now.Add(ttl)))
				if err != nil {
					return fmt.Errorf("crawlstate/postgres: %s %q: %w", op, source, err)
				}
				inserted = tag.RowsAffected() == 1
				return nil
			case err != nil:
				return fmt.Errorf("crawlstate/postgres: %s %q: %w", op, source, err)
			}
			takeover, err := check.Take(s.log, source, owner, now, held)
			if err != nil {
				return err
			}
			if takeover {
				held.Acquired = now
			}
			inserted = true
			if _, err := tx.Exec(ctx, s.q(`UPDATE {s}.run_locks SET owner = $2, acquired_at = $3, expires_at = $4 WHERE source = $1`),
				source, owner, backend.EncTime(held.Acquired), backend.EncTime(now.Add(ttl))); err != nil {
				return fmt.Errorf("crawlstate/postgres: %s %q: %w", op, source, err)
			}
			return nil
		})
		if err != nil || inserted {
			return err
		}
	}
}

// Refresh implements crawlstate.State.
func (s *State) Refresh(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) error {
	const op = "refresh lock"
	if err := check.Lease(op, source, owner, ttl); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, s.q(`UPDATE {s}.run_locks SET expires_at = $1 WHERE source = $2 AND owner = $3`),
		backend.EncTime(now.Add(ttl)), source, owner)
	if err != nil {
		return fmt.Errorf("crawlstate/postgres: %s %q: %w", op, source, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("crawlstate/postgres: %s %q: %q no longer holds it: %w", op, source, owner, crawlstate.ErrLockLost)
	}
	return nil
}

// Unlock implements crawlstate.State.
func (s *State) Unlock(ctx context.Context, source, owner string) error {
	if _, err := s.pool.Exec(ctx, s.q(`DELETE FROM {s}.run_locks WHERE source = $1 AND owner = $2`), source, owner); err != nil {
		return fmt.Errorf("crawlstate/postgres: unlock %q: %w", source, err)
	}
	return nil
}

// mustExist returns nil when the row exists, else an error wrapping
// crawlstate.ErrNotFound.
func (s *State) mustExist(ctx context.Context, op, source, u string) error {
	var one int
	err := s.pool.QueryRow(ctx, s.q(`SELECT 1 FROM {s}.pages WHERE source = $1 AND url = $2`), source, u).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return check.NoSuchURL(op, source, u)
	}
	if err != nil {
		return fmt.Errorf("crawlstate/postgres: %s of %q in source %q: %w", op, u, source, err)
	}
	return nil
}

// Links implements crawlstate.PageDetails.
func (s *State) Links(ctx context.Context, source, u string) ([]string, error) {
	const op = "links"
	var links []string
	err := s.pool.QueryRow(ctx, s.q(`SELECT links FROM {s}.links WHERE source = $1 AND url = $2`), source, u).Scan(&links)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, s.mustExist(ctx, op, source, u)
	}
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: %s of %q in source %q: %w", op, u, source, err)
	}
	if len(links) == 0 {
		return nil, nil
	}
	return links, nil
}

// Chunks implements crawlstate.PageDetails.
func (s *State) Chunks(ctx context.Context, source, u string) ([]crawlstate.Chunk, error) {
	const op = "chunks"
	rows, err := s.pool.Query(ctx, s.q(`
SELECT ordinal, text_hash, record_id, heading_path, start_byte, end_byte, text
FROM {s}.chunks WHERE source = $1 AND url = $2 ORDER BY ordinal`), source, u)
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: %s of %q in source %q: %w", op, u, source, err)
	}
	var out []crawlstate.Chunk
	var c crawlstate.Chunk
	_, err = pgx.ForEachRow(rows, []any{&c.Ordinal, &c.TextHash, &c.RecordID, &c.HeadingPath, &c.Start, &c.End, &c.Text},
		func() error { out = append(out, c); return nil })
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: %s of %q in source %q: %w", op, u, source, err)
	}
	if out == nil {
		return nil, s.mustExist(ctx, op, source, u)
	}
	return out, nil
}

// Vectors implements crawlstate.VectorCache.
func (s *State) Vectors(ctx context.Context, model string, textHashes []string) (map[string][]float32, error) {
	const op = "vectors"
	if err := check.Vectors(op, model, nil); err != nil {
		return nil, err
	}
	out := make(map[string][]float32, len(textHashes))
	if len(textHashes) == 0 {
		return out, ctx.Err()
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT text_hash, vector FROM {s}.vectors WHERE model = $1 AND text_hash = ANY($2::text[])`),
		model, textHashes)
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: %s of model %q: %w", op, model, err)
	}
	var h string
	var b []byte
	_, err = pgx.ForEachRow(rows, []any{&h, &b}, func() error {
		v, err := backend.DecodeVector(b)
		if err != nil {
			return fmt.Errorf("text hash %s: %w", h, err)
		}
		out[h] = v
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: %s of model %q: %w", op, model, err)
	}
	return out, nil
}

// PutVectors implements crawlstate.VectorCache in one statement.
func (s *State) PutVectors(ctx context.Context, model string, vectors map[string][]float32) error {
	const op = "put vectors"
	if err := check.Vectors(op, model, vectors); err != nil {
		return err
	}
	if len(vectors) == 0 {
		return ctx.Err()
	}
	hashes := slices.Sorted(maps.Keys(vectors)) // rows locked in key order
	enc := make([][]byte, len(hashes))
	for i, h := range hashes {
		enc[i] = backend.EncodeVector(vectors[h])
	}
	if _, err := s.pool.Exec(ctx, s.q(`
INSERT INTO {s}.vectors (model, text_hash, vector) SELECT $1, * FROM unnest($2::text[], $3::bytea[])
ON CONFLICT (model, text_hash) DO UPDATE SET vector = excluded.vector`), model, hashes, enc); err != nil {
		return fmt.Errorf("crawlstate/postgres: %s of model %q: %w", op, model, err)
	}
	return nil
}

// PendingAlerts implements crawlstate.AlertOutbox.
func (s *State) PendingAlerts(ctx context.Context, source string, limit int) ([]crawlstate.Alert, error) {
	const op = "pending alerts"
	if err := check.Limit(op, limit); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT `+backend.AlertColumns+` FROM {s}.alerts
WHERE source = $1 AND delivered_at = -9223372036854775808 ORDER BY created_at, id LIMIT $2`), source, limit)
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: %s of source %q: %w", op, source, err)
	}
	defer rows.Close()
	var out []crawlstate.Alert
	for rows.Next() {
		a, err := backend.ScanAlert(rows)
		if err != nil {
			return nil, fmt.Errorf("crawlstate/postgres: %s of source %q: %w", op, source, err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: %s of source %q: %w", op, source, err)
	}
	return out, nil
}

// Alert implements crawlstate.AlertOutbox.
func (s *State) Alert(ctx context.Context, id string) (crawlstate.Alert, error) {
	a, err := backend.ScanAlert(s.pool.QueryRow(ctx, s.q(`SELECT `+backend.AlertColumns+` FROM {s}.alerts WHERE id = $1`), id))
	if errors.Is(err, pgx.ErrNoRows) {
		return crawlstate.Alert{}, fmt.Errorf("crawlstate/postgres: alert %q: %w", id, crawlstate.ErrNotFound)
	}
	if err != nil {
		return crawlstate.Alert{}, fmt.Errorf("crawlstate/postgres: alert %q: %w", id, err)
	}
	return a, nil
}

// MarkDelivered implements crawlstate.AlertOutbox; it ends the alert's
// lease.
func (s *State) MarkDelivered(ctx context.Context, id string, at time.Time) error {
	const op = "mark delivered"
	if err := check.Delivered(id, at); err != nil {
		return err
	}
	return s.updatePendingAlert(ctx, op, id, `UPDATE {s}.alerts SET delivered_at = $2, lease_owner = NULL, lease_expires = NULL
WHERE id = $1 AND delivered_at = -9223372036854775808`, backend.EncTime(at))
}

// MarkAlertFailed implements crawlstate.AlertOutbox; it ends the alert's
// lease.
func (s *State) MarkAlertFailed(ctx context.Context, id string, at time.Time, errMsg string) error {
	return s.updatePendingAlert(ctx, "mark alert failed", id, `
UPDATE {s}.alerts SET attempts = attempts + 1, last_error = $2, last_attempt = $3, lease_owner = NULL, lease_expires = NULL
WHERE id = $1 AND delivered_at = -9223372036854775808`, errMsg, backend.EncTime(at))
}

// updatePendingAlert runs an UPDATE of a pending alert ($1 is its ID); a
// delivered alert is left alone, an unknown one is ErrNotFound.
func (s *State) updatePendingAlert(ctx context.Context, op, id, query string, args ...any) error {
	tag, err := s.pool.Exec(ctx, s.q(query), append([]any{id}, args...)...)
	if err != nil {
		return fmt.Errorf("crawlstate/postgres: %s %q: %w", op, id, err)
	}
	if tag.RowsAffected() > 0 {
		return nil
	}
	return s.alertExists(ctx, op, id)
}

// alertExists returns nil when the alert exists, else an error wrapping
// crawlstate.ErrNotFound.
func (s *State) alertExists(ctx context.Context, op, id string) error {
	var one int
	err := s.pool.QueryRow(ctx, s.q(`SELECT 1 FROM {s}.alerts WHERE id = $1`), id).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return check.NoSuchAlert(op, id)
	}
	if err != nil {
		return fmt.Errorf("crawlstate/postgres: %s %q: %w", op, id, err)
	}
	return nil
}

// Document implements crawlstate.DocumentStore.
func (s *State) Document(ctx context.Context, source, u string) (crawlstate.Document, error) {
	const op = "document"
	d, err := backend.ScanDocument(s.pool.QueryRow(ctx, s.q(`SELECT `+backend.DocumentColumns+` FROM {s}.documents WHERE source = $1 AND url = $2`), source, u))
	if errors.Is(err, pgx.ErrNoRows) {
		return crawlstate.Document{}, check.NoSuchDocument(op, source, u)
	}
	if err != nil {
		return crawlstate.Document{}, fmt.Errorf("crawlstate/postgres: %s %q of source %q: %w", op, u, source, err)
	}
	return d, nil
}

// PutDocument implements crawlstate.DocumentStore.
func (s *State) PutDocument(ctx context.Context, source string, doc crawlstate.Document) error {
	const op = "put document"
	if err := check.Document(source, doc); err != nil {
		return err
	}
	return s.withTx(ctx, op, func(tx pgx.Tx) error {
		// A new full read (another FetchedAt) moves the line between the
		// rows the document vouches for and the rest: the time its stamp
		// vouched for them is written to those rows first (seenColumn).
		if _, err := tx.Exec(ctx, s.q(settleSeenSQL), source, doc.URL, backend.EncTime(doc.FetchedAt)); err != nil {
			return fmt.Errorf("crawlstate/postgres: %s %q of source %q: settle its rows' LastSeen: %w", op, doc.URL, source, err)
		}
		_, err := tx.Exec(ctx, s.q(`
INSERT INTO {s}.documents AS o (source, `+backend.DocumentColumns+`)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (source, url) DO UPDATE SET
	etag           = excluded.etag,
	last_modified  = excluded.last_modified,
	entries        = excluded.entries,
	newest_lastmod = excluded.newest_lastmod,
	listed_lastmod = excluded.listed_lastmod,
	seen_at        = CASE WHEN o.fetched_at = excluded.fetched_at THEN o.seen_at ELSE 0 END,
	fetched_at     = excluded.fetched_at`),
			backend.DocumentArgs(source, doc)...)
		if err != nil {
			return fmt.Errorf("crawlstate/postgres: %s %q of source %q: %w", op, doc.URL, source, err)
		}
		return nil
	})
}

// settleSeenSQL writes a document's seen_at into the last_seen of the
// rows it vouches for (those listed at its last full read: last_seen >=
// fetched_at), before a PutDocument with another FetchedAt ($3) moves that
// line. Only rows behind the stamp are written: after a full read, those
// the document no longer lists.
const settleSeenSQL = `
UPDATE {s}.pages p SET last_seen = d.seen_at
FROM {s}.documents d
WHERE d.source = $1 AND d.url = $2 AND d.fetched_at <> $3
	AND p.source = $1 AND p.listed_in = $2
	AND p.last_seen >= d.fetched_at AND p.last_seen < d.seen_at`

// TouchListed implements crawlstate.DocumentStore. When a Document is
// stored for via, no row gets a new version: the document's seen_at is set
// to now, and a row's LastSeen is read through it (seenColumn) while the
// row is one the document listed at its last full read; only rows whose
// MissingRuns is not 0 are written. Without a stored document every listed
// row is written in one UPDATE.
func (s *State) TouchListed(ctx context.Context, source, via string, now time.Time) (int, error) {
	const op = "touch listed"
	if err := check.Via(via); err != nil {
		return 0, err
	}
	var n int64
	err := s.withTx(ctx, op, func(tx pgx.Tx) error {
		var fetched int64
		err := tx.QueryRow(ctx, s.q(`SELECT fetched_at FROM {s}.documents WHERE source = $1 AND url = $2 FOR UPDATE`), source, via).Scan(&fetched)
		if errors.Is(err, pgx.ErrNoRows) {
			tag, err := tx.Exec(ctx, s.q(`
UPDATE {s}.pages SET last_seen = $3, missing_runs = 0
WHERE source = $1 AND listed_in = $2`), source, via, backend.EncTime(now))
			if err != nil {
				return fmt.Errorf("crawlstate/postgres: %s %q of source %q: %w", op, via, source, err)
			}
			n = tag.RowsAffected()
			return nil
		}
		if err != nil {
			return fmt.Errorf("crawlstate/postgres: %s %q of source %q: %w", op, via, source, err)
		}
		// The document is stamped; its rows are only counted, and
		// written only where an absence was being counted.
		var absent int64
		if err := tx.QueryRow(ctx, s.q(`
SELECT count(*), count(*) FILTER (WHERE missing_runs <> 0) FROM {s}.pages
WHERE source = $1 AND listed_in = $2 AND last_seen >= $3`), source, via, fetched).Scan(&n, &absent); err != nil {
			return fmt.Errorf("crawlstate/postgres: %s %q of source %q: count its rows: %w", op, via, source, err)
		}
		if absent > 0 {
			if _, err := tx.Exec(ctx, s.q(`
UPDATE {s}.pages SET missing_runs = 0
WHERE source = $1 AND listed_in = $2 AND last_seen >= $3 AND missing_runs <> 0`), source, via, fetched); err != nil {
				return fmt.Errorf("crawlstate/postgres: %s %q of source %q: %w", op, via, source, err)
			}
		}
		if _, err := tx.Exec(ctx, s.q(`UPDATE {s}.documents SET seen_at = greatest(seen_at, $3) WHERE source = $1 AND url = $2`),
			source, via, backend.EncTime(now)); err != nil {
			return fmt.Errorf("crawlstate/postgres: %s %q of source %q: %w", op, via, source, err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

// LogEvents implements crawlstate.EventLog in one statement.
func (s *State) LogEvents(ctx context.Context, source string, events []crawlstate.StageEvent) error {
	const op = "log events"
	if err := check.Events(source, events); err != nil {
		return err
	}
	if len(events) == 0 {
		return ctx.Err()
	}
	var a roundArgs
	a.add(&crawlstate.Result{Events: events, Excluded: "events"}) // only the events are read
	if _, err := s.pool.Exec(ctx, s.q(insertEventsSQL), source, a.eventURL, a.eventAt, a.eventStage, a.eventAttempt,
		a.eventOK, a.eventErr, a.eventDetail); err != nil {
		return fmt.Errorf("crawlstate/postgres: %s of source %q: %w", op, source, err)
	}
	return nil
}

// Events implements crawlstate.EventLog.
func (s *State) Events(ctx context.Context, source, u string, since time.Time) ([]crawlstate.StageEvent, error) {
	const op = "events"
	rows, err := s.pool.Query(ctx, s.q(`
SELECT url, at, stage, attempt, ok, err, detail FROM {s}.events
WHERE source = $1 AND url = $2 AND at >= $3 ORDER BY at, id`), source, u, backend.EncTime(since))
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: %s of %q in source %q: %w", op, u, source, err)
	}
	var out []crawlstate.StageEvent
	var e crawlstate.StageEvent
	var at int64
	_, err = pgx.ForEachRow(rows, []any{&e.URL, &at, &e.Stage, &e.Attempt, &e.OK, &e.Err, &e.Detail}, func() error {
		e.At = backend.DecTime(at)
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: %s of %q in source %q: %w", op, u, source, err)
	}
	return out, nil
}

// DeadLetters implements crawlstate.EventLog.
func (s *State) DeadLetters(ctx context.Context, source string, minFailures int) ([]crawlstate.Row, error) {
	const op = "dead letters"
	if err := check.MinFailures(minFailures); err != nil {
		return nil, err
	}
	out, err := s.queryRows(ctx, nil, source, `SELECT `+rowColumns+` FROM {s}.pages
WHERE source = $1 AND failures > 0 AND failures >= $2 ORDER BY failures DESC, url`, source, minFailures)
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: %s of source %q: %w", op, source, err)
	}
	return out, nil
}

// RecordRun implements crawlstate.RunLog.
func (s *State) RecordRun(ctx context.Context, source string, start time.Time) error {
	const op = "record run"
	if err := check.Run(op, source, start); err != nil {
		return err
	}
	return s.withTx(ctx, op, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, s.q(`INSERT INTO {s}.runs (source, start) VALUES ($1, $2) ON CONFLICT DO NOTHING`),
			source, backend.EncTime(start)); err != nil {
			return fmt.Errorf("crawlstate/postgres: %s %q: %w", op, source, err)
		}
		if _, err := tx.Exec(ctx, s.q(`
DELETE FROM {s}.runs WHERE source = $1 AND start < (
	SELECT start FROM {s}.runs WHERE source = $1 ORDER BY start DESC LIMIT 1 OFFSET $2)`),
			source, crawlstate.KeepRuns-1); err != nil {
			return fmt.Errorf("crawlstate/postgres: %s %q: trim: %w", op, source, err)
		}
		return nil
	})
}

// Runs implements crawlstate.RunLog.
func (s *State) Runs(ctx context.Context, source string, limit int) ([]time.Time, error) {
	if err := check.Limit("runs", limit); err != nil {
		return nil, err
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT start FROM {s}.runs WHERE source = $1 ORDER BY start DESC LIMIT $2`), source, limit)
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: runs of %q: %w", source, err)
	}
	out := []time.Time{}
	var v int64
	if _, err := pgx.ForEachRow(rows, []any{&v}, func() error { out = append(out, backend.DecTime(v)); return nil }); err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: runs of %q: %w", source, err)
	}
	return out, nil
}

// LastModTrust implements crawlstate.TrustStore.
func (s *State) LastModTrust(ctx context.Context, source string) (crawlstate.LastModCounts, error) {
	if err := check.Source("lastmod trust", source); err != nil {
		return crawlstate.LastModCounts{}, err
	}
	var c crawlstate.LastModCounts
	err := s.pool.QueryRow(ctx, s.q(`SELECT moved_changed, moved_same, still_changed, still_same FROM {s}.lastmod_trust WHERE source = $1`), source).
		Scan(&c.MovedChanged, &c.MovedSame, &c.StillChanged, &c.StillSame)
	if errors.Is(err, pgx.ErrNoRows) {
		return crawlstate.LastModCounts{}, nil
	}
	if err != nil {
		return crawlstate.LastModCounts{}, fmt.Errorf("crawlstate/postgres: lastmod trust of %q: %w", source, err)
	}
	return c, nil
}

// AddLastModTrust implements crawlstate.TrustStore in one transaction.
func (s *State) AddLastModTrust(ctx context.Context, source string, d crawlstate.LastModCounts, keep float64) error {
	const op = "add lastmod trust"
	if err := check.Trust(source, d, keep); err != nil {
		return err
	}
	return s.withTx(ctx, op, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, s.q(`
INSERT INTO {s}.lastmod_trust AS t (source, moved_changed, moved_same, still_changed, still_same) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (source) DO UPDATE SET
	moved_changed = t.moved_changed + excluded.moved_changed,
	moved_same    = t.moved_same + excluded.moved_same,
	still_changed = t.still_changed + excluded.still_changed,
	still_same    = t.still_same + excluded.still_same`),
			source, d.MovedChanged, d.MovedSame, d.StillChanged, d.StillSame); err != nil {
			return fmt.Errorf("crawlstate/postgres: %s of %q: %w", op, source, err)
		}
		if keep <= 0 {
			return nil
		}
		if _, err := tx.Exec(ctx, s.q(`
UPDATE {s}.lastmod_trust SET
	moved_changed = moved_changed * $1 / (moved_changed + moved_same + still_changed + still_same),
	moved_same    = moved_same    * $1 / (moved_changed + moved_same + still_changed + still_same),
	still_changed = still_changed * $1 / (moved_changed + moved_same + still_changed + still_same),
	still_same    = still_same    * $1 / (moved_changed + moved_same + still_changed + still_same)
WHERE source = $2 AND moved_changed + moved_same + still_changed + still_same > $1`), keep, source); err != nil {
			return fmt.Errorf("crawlstate/postgres: %s of %q: scale: %w", op, source, err)
		}
		return nil
	})
}
