package sqlite

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
)

var _ crawlstate.PlanLister = (*State)(nil)

// planSQL selects the columns of a row that planning reads (planColumns):
// each column costs a few calls into SQLite for every row, so the
// columns PlanRows leaves empty are not selected at all.
const planSQL = `
SELECT url, last_fetched, next_check, interval_ns, content_hash, visits, changes,
	last_changed, elapsed_ns, recent, origin_modified, change_rate, weight
FROM pages
WHERE source = :source AND url > :after AND gone = 0
ORDER BY url
LIMIT :limit`

// planRows is the shape of planSQL's rows.
var planRows = rowShape{columns: 13, decode: decodePlanRow}

// decodePlanRow converts one row selected by planSQL into *r, as
// decodeRow does a whole one; the fields PlanRows leaves empty are zero
// values.
func decodePlanRow(r *crawlstate.Row, source string, vals []driver.Value) error {
	var d rowDecoder
	*r = crawlstate.Row{
		Source: source, URL: d.text(vals[0], 0),
		LastFetched: backend.DecTime(d.int(vals[1], 1)),
		NextCheck:   backend.DecTime(d.int(vals[2], 2)), Interval: time.Duration(d.int(vals[3], 3)),
		ContentHash: d.text(vals[4], 4),
		Visits:      int(d.int(vals[5], 5)), Changes: int(d.int(vals[6], 6)),
	}
	return d.stats(r, vals, 7)
}

// PlanRows implements PlanLister.
func (s *State) PlanRows(ctx context.Context, source, after string, limit int) ([]crawlstate.Row, error) {
	const op = "plan rows"
	if err := check.Limit(op, limit); err != nil {
		return nil, err
	}
	out, err := s.readRows(ctx, source, limit, planRows, planSQL, sql.Named("source", source), sql.Named("after", after), sql.Named("limit", limit))
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
	if err := check.Limit(op, limit); err != nil {
		return nil, err
	}
	out, err := s.queryStampedRows(ctx, source, limit, liveSQL, sql.Named("source", source), sql.Named("after", after), sql.Named("limit", limit))
	if err != nil {
		return nil, fmt.Errorf("crawlstate: %s: %w", op, err)
	}
	return out, nil
}
