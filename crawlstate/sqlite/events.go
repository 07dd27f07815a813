package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
)

const insertEventSQL = `
INSERT INTO events (page_key, source, url, at, stage, attempt, ok, err, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`

// eventKey is the key the event log indexes a page's events by (see
// schemaEventKeys): the FNV-1a hash of source, a zero byte and url, as
// an int64. It must never change: stored events are found by it.
func eventKey(source, url string) int64 {
	const offset, prime = 14695981039346656037, 1099511628211
	h := uint64(offset)
	for i := 0; i < len(source); i++ {
		h = (h ^ uint64(source[i])) * prime
	}
	h *= prime // the separator: h ^ 0 is h
	for i := 0; i < len(url); i++ {
		h = (h ^ uint64(url[i])) * prime
	}
	return int64(h)
}

// LogEvents implements State: one transaction, one prepared INSERT. An
// empty source, or an event without URL or Stage, is an error, and then
// nothing of the batch is stored.
func (s *State) LogEvents(ctx context.Context, source string, events []crawlstate.StageEvent) error {
	const op = "log events"
	if err := check.Events(source, events); err != nil {
		return err
	}
	if len(events) == 0 {
		return ctx.Err()
	}
	return s.withTx(ctx, op, func(tx *sql.Tx) error {
		ps := s.txStmts(tx)
		defer ps.close()
		for _, e := range events {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("crawlstate: %s: %w", op, err)
			}
			if _, err := ps.exec(ctx, insertEventSQL, eventKey(source, e.URL), source, e.URL, backend.EncTime(e.At), e.Stage, e.Attempt, e.OK, e.Err, e.Detail); err != nil {
				return fmt.Errorf("crawlstate: %s: %s of %q: %w", op, e.Stage, e.URL, err)
			}
		}
		return nil
	})
}

// Events implements State: by time, then in insertion order.
func (s *State) Events(ctx context.Context, source, u string, since time.Time) ([]crawlstate.StageEvent, error) {
	const op = "events"
	rows, err := s.r.QueryContext(ctx, `
SELECT url, at, stage, attempt, ok, err, detail FROM events
WHERE page_key = ? AND source = ? AND url = ? AND at >= ?
ORDER BY at, id`, eventKey(source, u), source, u, backend.EncTime(since))
	if err != nil {
		return nil, fmt.Errorf("crawlstate: %s of %q in source %q: %w", op, u, source, err)
	}
	defer rows.Close()
	var out []crawlstate.StageEvent
	for rows.Next() {
		var e crawlstate.StageEvent
		var at int64
		if err := rows.Scan(&e.URL, &at, &e.Stage, &e.Attempt, &e.OK, &e.Err, &e.Detail); err != nil {
			return nil, fmt.Errorf("crawlstate: %s of %q in source %q: %w", op, u, source, err)
		}
		e.At = backend.DecTime(at)
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("crawlstate: %s of %q in source %q: %w", op, u, source, err)
	}
	return out, nil
}

// deadLettersSQL reads the partial index pages_failing; "failures > 0"
// repeats the index's condition so SQLite can use it (minFailures >= 1
// implies it, but SQLite cannot see through a parameter).
const deadLettersSQL = `
SELECT ` + rowColumns + ` FROM pages
WHERE source = ? AND failures > 0 AND failures >= ?
ORDER BY failures DESC, url`

// DeadLetters implements State: most failures first, then by URL. A
// minFailures below 1 is an error.
func (s *State) DeadLetters(ctx context.Context, source string, minFailures int) ([]crawlstate.Row, error) {
	const op = "dead letters"
	if err := check.MinFailures(minFailures); err != nil {
		return nil, err
	}
	out, err := s.queryRows(ctx, source, 0, deadLettersSQL, source, minFailures)
	if err != nil {
		return nil, fmt.Errorf("crawlstate: %s of source %q: %w", op, source, err)
	}
	return out, nil
}
