package crawlstate

import (
	"context"
	"database/sql"
	"fmt"
)

// PlanLister is the optional ability of a State to list a source's live
// rows with only the columns that planning a run reads, cheaper than
// reading them whole through Due. A crawler finds it by type assertion.
type PlanLister interface {
	// PlanRows returns up to limit live (not gone) rows of source whose
	// URL sorts after after, in URL order, with only Source, URL,
	// LastFetched, NextCheck, Interval, ContentHash, Visits, Changes and
	// Stats set; the other fields are zero. A limit below 1 is an error.
	PlanRows(ctx context.Context, source, after string, limit int) ([]Row, error)
}

var _ PlanLister = (*SQLite)(nil)

// planSQL selects rowColumns with the columns planning does not read left
// empty (zero times as stored: the smallest int64), so that decodeRow
// reads both.
const planSQL = `
SELECT url, '', ` + zeroSQL + `, ` + zeroSQL + `, last_fetched,
	next_check, interval_ns, content_hash, '', '', ` + zeroSQL + `,
	0, gone, visits, changes, 0, '',
	'', ` + zeroSQL + `, '', '', '', '',
	last_changed, elapsed_ns, recent, origin_modified, change_rate, weight, ''
FROM pages
WHERE source = :source AND url > :after AND gone = 0
ORDER BY url
LIMIT :limit`

// zeroSQL is the stored zero time as an SQL integer expression (the
// literal -9223372036854775808 would be read as a real).
const zeroSQL = `(-9223372036854775807 - 1)`

// PlanRows implements PlanLister.
func (s *SQLite) PlanRows(ctx context.Context, source, after string, limit int) ([]Row, error) {
	const op = "plan rows"
	if limit < 1 {
		return nil, fmt.Errorf("crawlstate: %s: limit %d; pass a page size of at least 1", op, limit)
	}
	out, err := s.queryRows(ctx, source, limit, planSQL, sql.Named("source", source), sql.Named("after", after), sql.Named("limit", limit))
	if err != nil {
		return nil, fmt.Errorf("crawlstate: %s: %w", op, err)
	}
	return out, nil
}

// LiveLister is the optional ability of a State to list a source's live
// rows whole, every field as Due returns it, in URL order. A crawler that
// plans a run over every live row and then fetches the due ones can read
// each row once with it instead of twice (PlanRows, then Due). A crawler
// finds it by type assertion.
type LiveLister interface {
	// LiveRows returns up to limit live (not gone) rows of source whose
	// URL sorts after after, in URL order, every field set. A limit below
	// 1 is an error.
	LiveRows(ctx context.Context, source, after string, limit int) ([]Row, error)
}

var _ LiveLister = (*SQLite)(nil)

// liveSQL selects the whole of the source's live rows after a URL: a
// range of the primary key.
const liveSQL = `
SELECT ` + rowColumns + `
FROM pages
WHERE source = :source AND url > :after AND gone = 0
ORDER BY url
LIMIT :limit`

// LiveRows implements LiveLister.
func (s *SQLite) LiveRows(ctx context.Context, source, after string, limit int) ([]Row, error) {
	const op = "live rows"
	if limit < 1 {
		return nil, fmt.Errorf("crawlstate: %s: limit %d; pass a page size of at least 1", op, limit)
	}
	out, err := s.queryRows(ctx, source, limit, liveSQL, sql.Named("source", source), sql.Named("after", after), sql.Named("limit", limit))
	if err != nil {
		return nil, fmt.Errorf("crawlstate: %s: %w", op, err)
	}
	return out, nil
}
