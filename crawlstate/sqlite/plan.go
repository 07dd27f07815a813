package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/recrawl/recrawl/crawlstate"
)

var _ crawlstate.PlanLister = (*State)(nil)

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
func (s *State) PlanRows(ctx context.Context, source, after string, limit int) ([]crawlstate.Row, error) {
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

var _ crawlstate.LiveLister = (*State)(nil)

// liveSQL selects the whole of the source's live rows after a URL: a
// range of the primary key.
const liveSQL = `
SELECT ` + storedRowColumns + `
FROM pages
WHERE source = :source AND url > :after AND gone = 0
ORDER BY url
LIMIT :limit`

// LiveRows implements LiveLister.
func (s *State) LiveRows(ctx context.Context, source, after string, limit int) ([]crawlstate.Row, error) {
	const op = "live rows"
	if limit < 1 {
		return nil, fmt.Errorf("crawlstate: %s: limit %d; pass a page size of at least 1", op, limit)
	}
	out, err := s.queryStampedRows(ctx, source, limit, liveSQL, sql.Named("source", source), sql.Named("after", after), sql.Named("limit", limit))
	if err != nil {
		return nil, fmt.Errorf("crawlstate: %s: %w", op, err)
	}
	return out, nil
}
