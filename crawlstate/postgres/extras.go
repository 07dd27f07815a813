package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/recrawl/recrawl/crawlstate"
)

// Lock implements crawlstate.State. The lock row is read FOR UPDATE, so
// concurrent Locks of one source queue on it; a missing row is inserted,
// and a Lock that loses that insert to another reads the row again.
func (s *State) Lock(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) error {
	const op = "lock"
	if err := checkLeaseArgs(op, source, owner, ttl); err != nil {
		return err
	}
	for {
		inserted := false
		err := s.withTx(ctx, op, func(tx pgx.Tx) error {
			var holder string
			var acquired, expires int64
			err := tx.QueryRow(ctx, s.q(`SELECT owner, acquired_at, expires_at FROM {s}.run_locks WHERE source = $1 FOR UPDATE`), source).
				Scan(&holder, &acquired, &expires)
			switch {
			case errors.Is(err, pgx.ErrNoRows):
				tag, err := tx.Exec(ctx, s.q(`INSERT INTO {s}.run_locks (source, owner, acquired_at, expires_at) VALUES ($1, $2, $3, $4)
ON CONFLICT (source) DO NOTHING`), source, owner, encTime(now), encTime(now.Add(ttl)))
				if err != nil {
					return fmt.Errorf("crawlstate/postgres: %s %q: %w", op, source, err)
				}
				inserted = tag.RowsAffected() == 1
				return nil
			case err != nil:
				return fmt.Errorf("crawlstate/postgres: %s %q: %w", op, source, err)
			case holder != owner && expires > encTime(now):
				return &crawlstate.LockHeldError{Source: source, Owner: holder, Acquired: decTime(acquired), Expires: decTime(expires)}
			case holder != owner:
				s.log.Warn("crawlstate/postgres: took over an expired run lock",
					"source", source, "owner", owner, "previous_owner", holder, "expired_at", decTime(expires))
				acquired = encTime(now)
			}
			inserted = true
			if _, err := tx.Exec(ctx, s.q(`UPDATE {s}.run_locks SET owner = $2, acquired_at = $3, expires_at = $4 WHERE source = $1`),
				source, owner, acquired, encTime(now.Add(ttl))); err != nil {
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
	if err := checkLeaseArgs(op, source, owner, ttl); err != nil {
		return err
	}
	tag, err := s.pool.Exec(ctx, s.q(`UPDATE {s}.run_locks SET expires_at = $1 WHERE source = $2 AND owner = $3`),
		encTime(now.Add(ttl)), source, owner)
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

// checkLeaseArgs checks the arguments of a lock or a lease.
func checkLeaseArgs(op, source, owner string, ttl time.Duration) error {
	if err := crawlstate.CheckLease(source, owner, ttl); err != nil {
		return fmt.Errorf("crawlstate/postgres: %s: %w", op, err)
	}
	return nil
}

// mustExist returns nil when the row exists, else an error wrapping
// crawlstate.ErrNotFound.
func (s *State) mustExist(ctx context.Context, op, source, u string) error {
	var one int
	err := s.pool.QueryRow(ctx, s.q(`SELECT 1 FROM {s}.pages WHERE source = $1 AND url = $2`), source, u).Scan(&one)
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("crawlstate/postgres: %s of %q: no such URL in source %q: %w", op, u, source, crawlstate.ErrNotFound)
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
	if model == "" {
		return nil, fmt.Errorf("crawlstate/postgres: %s: empty model name", op)
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
		v, err := decodeVector(b)
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
	if model == "" {
		return fmt.Errorf("crawlstate/postgres: %s: empty model name", op)
	}
	hashes := make([]string, 0, len(vectors))
	for h, v := range vectors {
		if h == "" {
			return fmt.Errorf("crawlstate/postgres: %s of model %q: an empty text hash; key vectors by the chunk's text hash", op, model)
		}
		if len(v) == 0 {
			return fmt.Errorf("crawlstate/postgres: %s of model %q: text hash %s has an empty vector", op, model, h)
		}
		hashes = append(hashes, h)
	}
	if len(hashes) == 0 {
		return ctx.Err()
	}
	slices.Sort(hashes) // rows locked in key order
	enc := make([][]byte, len(hashes))
	for i, h := range hashes {
		enc[i] = encodeVector(vectors[h])
	}
	if _, err := s.pool.Exec(ctx, s.q(`
INSERT INTO {s}.vectors (model, text_hash, vector) SELECT $1, * FROM unnest($2::text[], $3::bytea[])
ON CONFLICT (model, text_hash) DO UPDATE SET vector = excluded.vector`), model, hashes, enc); err != nil {
		return fmt.Errorf("crawlstate/postgres: %s of model %q: %w", op, model, err)
	}
	return nil
}

const alertColumns = `id, source, url, kind, created_at, payload, delivered_at, attempts, last_error`

func scanAlert(row pgx.Row) (crawlstate.Alert, error) {
	var (
		a                  crawlstate.Alert
		created, delivered int64
	)
	if err := row.Scan(&a.ID, &a.Source, &a.URL, &a.Kind, &created, &a.Payload, &delivered, &a.Attempts, &a.LastError); err != nil {
		return crawlstate.Alert{}, err
	}
	a.CreatedAt, a.DeliveredAt = decTime(created), decTime(delivered)
	if len(a.Payload) == 0 {
		a.Payload = nil
	}
	return a, nil
}

// PendingAlerts implements crawlstate.AlertOutbox.
func (s *State) PendingAlerts(ctx context.Context, source string, limit int) ([]crawlstate.Alert, error) {
	const op = "pending alerts"
	if limit < 1 {
		return nil, fmt.Errorf("crawlstate/postgres: %s: limit %d; pass a page size of at least 1", op, limit)
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT `+alertColumns+` FROM {s}.alerts
WHERE source = $1 AND delivered_at = -9223372036854775808 ORDER BY created_at, id LIMIT $2`), source, limit)
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: %s of source %q: %w", op, source, err)
	}
	defer rows.Close()
	var out []crawlstate.Alert
	for rows.Next() {
		a, err := scanAlert(rows)
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
	a, err := scanAlert(s.pool.QueryRow(ctx, s.q(`SELECT `+alertColumns+` FROM {s}.alerts WHERE id = $1`), id))
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
	if at.IsZero() {
		return fmt.Errorf("crawlstate/postgres: %s %q: zero delivery time; pass when the sink acknowledged the alert", op, id)
	}
	return s.updatePendingAlert(ctx, op, id, `UPDATE {s}.alerts SET delivered_at = $2, lease_owner = NULL, lease_expires = NULL
WHERE id = $1 AND delivered_at = -9223372036854775808`, encTime(at))
}

// MarkAlertFailed implements crawlstate.AlertOutbox; it ends the alert's
// lease.
func (s *State) MarkAlertFailed(ctx context.Context, id string, at time.Time, errMsg string) error {
	return s.updatePendingAlert(ctx, "mark alert failed", id, `
UPDATE {s}.alerts SET attempts = attempts + 1, last_error = $2, last_attempt = $3, lease_owner = NULL, lease_expires = NULL
WHERE id = $1 AND delivered_at = -9223372036854775808`, errMsg, encTime(at))
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
		return fmt.Errorf("crawlstate/postgres: %s %q: no such alert: %w", op, id, crawlstate.ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("crawlstate/postgres: %s %q: %w", op, id, err)
	}
	return nil
}

// Document implements crawlstate.DocumentStore.
func (s *State) Document(ctx context.Context, source, u string) (crawlstate.Document, error) {
	const op = "document"
	var (
		d                         crawlstate.Document
		newest, listed, fetchedAt int64
	)
	err := s.pool.QueryRow(ctx, s.q(`
SELECT url, etag, last_modified, entries, newest_lastmod, listed_lastmod, fetched_at
FROM {s}.documents WHERE source = $1 AND url = $2`), source, u).
		Scan(&d.URL, &d.ETag, &d.LastModified, &d.Entries, &newest, &listed, &fetchedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return crawlstate.Document{}, fmt.Errorf("crawlstate/postgres: %s %q of source %q: %w", op, u, source, crawlstate.ErrNotFound)
	}
	if err != nil {
		return crawlstate.Document{}, fmt.Errorf("crawlstate/postgres: %s %q of source %q: %w", op, u, source, err)
	}
	d.NewestLastMod, d.ListedLastMod, d.FetchedAt = decTime(newest), decTime(listed), decTime(fetchedAt)
	return d, nil
}

// PutDocument implements crawlstate.DocumentStore.
func (s *State) PutDocument(ctx context.Context, source string, doc crawlstate.Document) error {
	const op = "put document"
	if source == "" || doc.URL == "" {
		return fmt.Errorf("crawlstate/postgres: %s: empty source (%q) or document URL (%q)", op, source, doc.URL)
	}
	return s.withTx(ctx, op, func(tx pgx.Tx) error {
		// A new full read (another FetchedAt) moves the line between the
		// rows the document vouches for and the rest: the time its stamp
		// vouched for them is written to those rows first (seenColumn).
		if _, err := tx.Exec(ctx, s.q(settleSeenSQL), source, doc.URL, encTime(doc.FetchedAt)); err != nil {
			return fmt.Errorf("crawlstate/postgres: %s %q of source %q: settle its rows' LastSeen: %w", op, doc.URL, source, err)
		}
		_, err := tx.Exec(ctx, s.q(`
INSERT INTO {s}.documents AS o (source, url, etag, last_modified, entries, newest_lastmod, listed_lastmod, fetched_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (source, url) DO UPDATE SET
	etag           = excluded.etag,
	last_modified  = excluded.last_modified,
	entries        = excluded.entries,
	newest_lastmod = excluded.newest_lastmod,
	listed_lastmod = excluded.listed_lastmod,
	seen_at        = CASE WHEN o.fetched_at = excluded.fetched_at THEN o.seen_at ELSE 0 END,
	fetched_at     = excluded.fetched_at`),
			source, doc.URL, doc.ETag, doc.LastModified, doc.Entries,
			encTime(doc.NewestLastMod), encTime(doc.ListedLastMod), encTime(doc.FetchedAt))
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
	if via == "" {
		return 0, fmt.Errorf("crawlstate/postgres: %s: empty document URL; pass the document whose listing did not change", op)
	}
	var n int64
	err := s.withTx(ctx, op, func(tx pgx.Tx) error {
		var fetched int64
		err := tx.QueryRow(ctx, s.q(`SELECT fetched_at FROM {s}.documents WHERE source = $1 AND url = $2 FOR UPDATE`), source, via).Scan(&fetched)
		if errors.Is(err, pgx.ErrNoRows) {
			tag, err := tx.Exec(ctx, s.q(`
UPDATE {s}.pages SET last_seen = $3, missing_runs = 0
WHERE source = $1 AND listed_in = $2`), source, via, encTime(now))
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
			source, via, encTime(now)); err != nil {
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
	if source == "" {
		return fmt.Errorf("crawlstate/postgres: %s: empty source name", op)
	}
	for i, e := range events {
		if e.URL == "" || e.Stage == "" {
			return fmt.Errorf("crawlstate/postgres: %s: events[%d] has an empty URL (%q) or stage (%q)", op, i, e.URL, e.Stage)
		}
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
WHERE source = $1 AND url = $2 AND at >= $3 ORDER BY at, id`), source, u, encTime(since))
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: %s of %q in source %q: %w", op, u, source, err)
	}
	var out []crawlstate.StageEvent
	var e crawlstate.StageEvent
	var at int64
	_, err = pgx.ForEachRow(rows, []any{&e.URL, &at, &e.Stage, &e.Attempt, &e.OK, &e.Err, &e.Detail}, func() error {
		e.At = decTime(at)
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
	if minFailures < 1 {
		return nil, fmt.Errorf("crawlstate/postgres: %s: minFailures %d; pass at least 1", op, minFailures)
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
	switch {
	case source == "":
		return errors.New("crawlstate/postgres: record run: empty source name")
	case start.IsZero():
		return fmt.Errorf("crawlstate/postgres: record run of %q: zero start time; pass the run's start", source)
	}
	return s.withTx(ctx, op, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, s.q(`INSERT INTO {s}.runs (source, start) VALUES ($1, $2) ON CONFLICT DO NOTHING`),
			source, encTime(start)); err != nil {
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
	if limit < 1 {
		return nil, fmt.Errorf("crawlstate/postgres: runs of %q: limit %d; it must be at least 1", source, limit)
	}
	rows, err := s.pool.Query(ctx, s.q(`SELECT start FROM {s}.runs WHERE source = $1 ORDER BY start DESC LIMIT $2`), source, limit)
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: runs of %q: %w", source, err)
	}
	out := []time.Time{}
	var v int64
	if _, err := pgx.ForEachRow(rows, []any{&v}, func() error { out = append(out, decTime(v)); return nil }); err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: runs of %q: %w", source, err)
	}
	return out, nil
}

// LastModTrust implements crawlstate.TrustStore.
func (s *State) LastModTrust(ctx context.Context, source string) (crawlstate.LastModCounts, error) {
	if source == "" {
		return crawlstate.LastModCounts{}, errors.New("crawlstate/postgres: lastmod trust: empty source name")
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
	if source == "" {
		return errors.New("crawlstate/postgres: add lastmod trust: empty source name")
	}
	if err := crawlstate.CheckTrust(d, keep); err != nil {
		return fmt.Errorf("crawlstate/postgres: %s of %q: %w", op, source, err)
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
