package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
)

// rowColumns lists the pages columns in the order scanRow reads them.
var rowColumns = rowColumnsOf("pages")

// rowColumnsOf is rowColumns for the pages table named (or aliased) t.
func rowColumnsOf(t string) string {
	return qualify(`url, original_url, first_seen`, t+".") + `, ` + seenColumn(t) + `, ` + qualify(`last_fetched,
	next_check, interval_ns, content_hash, etag, last_modified, sitemap_lastmod,
	missing_runs, gone, visits, changes, failures, last_error,
	last_stage, last_failure, title, canonical, alias_of, listed_in,
	last_changed, elapsed_ns, recent, origin_modified, change_rate, weight, excluded`, t+".")
}

// seenColumn is a row's LastSeen, of the pages table named t: its
// last_seen, or the seen_at of the document it was listed in at that
// document's last full read, when later (TouchListed stamps the document
// instead of writing a new version of every row).
func seenColumn(t string) string {
	return strings.NewReplacer("{t}", t).Replace(`CASE WHEN {t}.listed_in = '' THEN {t}.last_seen ELSE coalesce((
	SELECT greatest({t}.last_seen, d.seen_at) FROM {s}.documents d
	WHERE d.source = {t}.source AND d.url = {t}.listed_in AND {t}.last_seen >= d.fetched_at),
	{t}.last_seen) END`)
}

// unseenSQL holds for a pages row whose LastSeen (seenColumn) is before
// $2; its first term alone decides most rows.
const unseenSQL = `last_seen < $2 AND NOT EXISTS (
	SELECT 1 FROM {s}.documents d
	WHERE d.source = pages.source AND d.url = pages.listed_in
		AND d.seen_at >= $2 AND pages.last_seen >= d.fetched_at)`

// planColumns is rowColumns with the columns planning does not read
// replaced by their zero values.
const planColumns = `url, '', (-9223372036854775808)::bigint, (-9223372036854775808)::bigint, last_fetched,
	next_check, interval_ns, content_hash, '', '', (-9223372036854775808)::bigint,
	0, gone, visits, changes, 0, '',
	'', (-9223372036854775808)::bigint, '', '', '', '',
	last_changed, elapsed_ns, recent, origin_modified, change_rate, weight, ''`

// scanRow reads one row selected as rowColumns (or planColumns).
func scanRow(rows pgx.Rows, source string) (crawlstate.Row, error) {
	var (
		r                                            crawlstate.Row
		first, last, fetched, next, lastmod, failure int64
		changed, originMod, interval, elapsed        int64
		recent                                       []byte
	)
	err := rows.Scan(&r.URL, &r.OriginalURL, &first, &last, &fetched,
		&next, &interval, &r.ContentHash, &r.ETag, &r.LastModified, &lastmod,
		&r.MissingRuns, &r.Gone, &r.Visits, &r.Changes, &r.Failures, &r.LastError,
		&r.LastStage, &failure, &r.Title, &r.Canonical, &r.AliasOf, &r.ListedIn,
		&changed, &elapsed, &recent, &originMod, &r.Stats.ChangeRate, &r.Stats.Weight, &r.Excluded)
	if err != nil {
		return crawlstate.Row{}, err
	}
	r.Source = source
	r.FirstSeen, r.LastSeen, r.LastFetched, r.NextCheck = backend.DecTime(first), backend.DecTime(last), backend.DecTime(fetched), backend.DecTime(next)
	r.SitemapLastMod, r.LastFailure = backend.DecTime(lastmod), backend.DecTime(failure)
	r.Interval = time.Duration(interval)
	r.Stats.LastChanged, r.Stats.LastModified = backend.DecTime(changed), backend.DecTime(originMod)
	r.Stats.Elapsed = time.Duration(elapsed)
	if r.Stats.Recent, err = decodeChecks(recent); err != nil {
		return crawlstate.Row{}, fmt.Errorf("row %q: %w", r.URL, err)
	}
	return r, nil
}

// queryRows runs a query that selects rowColumns of source's rows.
func (s *State) queryRows(ctx context.Context, q pgx.Tx, source string, query string, args ...any) ([]crawlstate.Row, error) {
	var (
		rows pgx.Rows
		err  error
	)
	if q != nil {
		rows, err = q.Query(ctx, s.q(query), args...)
	} else {
		rows, err = s.pool.Query(ctx, s.q(query), args...)
	}
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []crawlstate.Row
	for rows.Next() {
		r, err := scanRow(rows, source)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// upsertChunk is how many URLs one statement of UpsertDiscovered carries.
const upsertChunk = 10_000

// upsertSQL merges a chunk of listed URLs ($2..$5: url, original_url,
// lastmod, via arrays, each URL once) into pages at $6 (now): the rows
// that exist are classified against their state before the statement
// and updated, the others inserted due now. It returns one row per URL
// handled: its outcome (new, seen, bumped, revived).
const upsertSQL = `
WITH input AS (
	SELECT * FROM unnest($2::text[], $3::text[], $4::bigint[], $5::text[]) AS i(url, original_url, lastmod, via)
), old AS (
	SELECT p.url, i.lastmod, i.via,
		CASE
			WHEN p.gone AND NOT $7::boolean
				AND (p.missing_runs > 0 OR (i.lastmod <> -9223372036854775808 AND i.lastmod <> p.sitemap_lastmod)) THEN 'revived'
			WHEN NOT p.gone AND i.lastmod <> -9223372036854775808 AND i.lastmod <> p.sitemap_lastmod THEN 'bumped'
			ELSE 'seen'
		END AS outcome,
		i.lastmod <> -9223372036854775808 AND i.lastmod <> p.sitemap_lastmod AS lastmod_moved,
		i.via <> '' AND i.via <> p.listed_in AS via_moved
	FROM input i JOIN {s}.pages p ON p.source = $1 AND p.url = i.url COLLATE "C"
	FOR UPDATE OF p
), upd AS (
	UPDATE {s}.pages p SET
		last_seen       = $6,
		missing_runs    = 0,
		sitemap_lastmod = CASE WHEN o.lastmod_moved THEN o.lastmod ELSE p.sitemap_lastmod END,
		listed_in       = CASE WHEN o.via_moved THEN o.via ELSE p.listed_in END,
		next_check      = CASE WHEN o.outcome IN ('bumped', 'revived') THEN -9223372036854775808 ELSE p.next_check END,
		excluded        = CASE WHEN o.outcome = 'bumped' THEN '' ELSE p.excluded END,
		gone            = CASE WHEN o.outcome = 'revived' THEN false ELSE p.gone END,
		content_hash    = CASE WHEN o.outcome = 'revived' THEN '' ELSE p.content_hash END,
		etag            = CASE WHEN o.outcome = 'revived' THEN '' ELSE p.etag END,
		last_modified   = CASE WHEN o.outcome = 'revived' THEN '' ELSE p.last_modified END
	FROM old o WHERE p.source = $1 AND p.url = o.url
	RETURNING o.outcome
), ins AS (
	INSERT INTO {s}.pages AS p (source, url, original_url, first_seen, last_seen, sitemap_lastmod, listed_in)
	SELECT $1, i.url, i.original_url, $6, $6, i.lastmod, i.via
	FROM input i WHERE NOT EXISTS (SELECT 1 FROM old o WHERE o.url = i.url COLLATE "C")
	ON CONFLICT (source, url) DO UPDATE SET last_seen = excluded.last_seen, missing_runs = 0
	RETURNING CASE WHEN p.xmax = 0 THEN 'new' ELSE 'seen' END AS outcome
)
SELECT outcome, count(*) FROM (SELECT outcome FROM upd UNION ALL SELECT outcome FROM ins) AS o GROUP BY outcome`

// UpsertDiscovered implements crawlstate.State in one transaction: the
// batch, each URL once (its first entry) in URL order, goes to the
// database as arrays, upsertChunk URLs to a statement.
func (s *State) UpsertDiscovered(ctx context.Context, source string, now time.Time, urls []crawlstate.Discovered) (crawlstate.UpsertStats, error) {
	const op = "upsert discovered"
	var st crawlstate.UpsertStats
	if err := check.Upsert(source, urls); err != nil {
		return st, err
	}
	if len(urls) == 0 {
		return st, ctx.Err()
	}
	// Each URL once, its first entry, in URL order: rows are locked in
	// key order, so concurrent upserts of one source do not deadlock.
	order := backend.KeyOrder(urls)

	err := s.withTx(ctx, op, func(tx pgx.Tx) error {
		var (
			u, orig, via []string
			lastmod      []int64
		)
		for rest := order; len(rest) > 0; {
			batch := rest[:min(len(rest), upsertChunk)]
			rest = rest[len(batch):]
			u, orig, via, lastmod = u[:0], orig[:0], via[:0], lastmod[:0]
			for _, i := range batch {
				d := urls[i]
				u, orig, via, lastmod = append(u, d.URL), append(orig, d.OriginalURL), append(via, d.Via), append(lastmod, backend.EncTime(d.LastMod))
			}
			rows, err := tx.Query(ctx, s.q(upsertSQL), source, u, orig, lastmod, via, backend.EncTime(now), s.opts.KeepTombstones)
			if err != nil {
				return fmt.Errorf("crawlstate/postgres: %s: %w", op, err)
			}
			var outcome string
			var n int
			_, err = pgx.ForEachRow(rows, []any{&outcome, &n}, func() error {
				switch outcome {
				case "new":
					st.New += n
				case "seen":
					st.Seen += n
				case "bumped":
					st.Seen += n
					st.Bumped += n
				case "revived":
					st.Seen += n
					st.Revived += n
				}
				return nil
			})
			if err != nil {
				return fmt.Errorf("crawlstate/postgres: %s: %w", op, err)
			}
		}
		return nil
	})
	if err != nil {
		return crawlstate.UpsertStats{}, err
	}
	return st, nil
}

// MarkMissing implements crawlstate.State in one transaction of three
// UPDATEs.
func (s *State) MarkMissing(ctx context.Context, source string, runStart, now time.Time, threshold int) (int, error) {
	const op = "mark missing"
	if err := check.Threshold(threshold); err != nil {
		return 0, err
	}
	var n int64
	err := s.withTx(ctx, op, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, s.q(`UPDATE {s}.pages SET missing_runs = missing_runs + 1
WHERE source = $1 AND NOT gone AND `+unseenSQL), source, backend.EncTime(runStart))
		if err != nil {
			return fmt.Errorf("crawlstate/postgres: %s: %w", op, err)
		}
		n = tag.RowsAffected()
		if _, err := tx.Exec(ctx, s.q(`UPDATE {s}.pages SET next_check = $3
WHERE source = $1 AND NOT gone
	AND missing_runs % $4 = 0 AND next_check > $3 AND excluded = '' AND `+unseenSQL), source, backend.EncTime(runStart), backend.EncTime(now), threshold); err != nil {
			return fmt.Errorf("crawlstate/postgres: %s: make due: %w", op, err)
		}
		if _, err := tx.Exec(ctx, s.q(`UPDATE {s}.pages SET missing_runs = 1
WHERE source = $1 AND gone AND missing_runs = 0 AND `+unseenSQL), source, backend.EncTime(runStart)); err != nil {
			return fmt.Errorf("crawlstate/postgres: %s: flag absent tombstones: %w", op, err)
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	return int(n), nil
}

// Due implements crawlstate.State: a keyset range of the due index.
func (s *State) Due(ctx context.Context, source string, now time.Time, after crawlstate.Key, limit int) ([]crawlstate.Row, error) {
	const op = "due"
	if err := check.Limit(op, limit); err != nil {
		return nil, err
	}
	out, err := s.queryRows(ctx, nil, source, `SELECT `+rowColumns+` FROM {s}.pages
WHERE source = $1 AND NOT gone AND next_check <= $2 AND (next_check, url) > ($3, $4::text COLLATE "C")
ORDER BY next_check, url LIMIT $5`, source, backend.EncTime(now), backend.EncTime(after.NextCheck), after.URL, limit)
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: %s of source %q: %w", op, source, err)
	}
	return out, nil
}

// NextDue implements crawlstate.State.
func (s *State) NextDue(ctx context.Context, source string) (time.Time, bool, error) {
	var next *int64
	err := s.pool.QueryRow(ctx, s.q(`SELECT min(next_check) FROM {s}.pages
WHERE source = $1 AND NOT gone AND next_check < 9223372036854775807`), source).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("crawlstate/postgres: next due of source %q: %w", source, err)
	}
	if next == nil {
		return time.Time{}, false, nil
	}
	return backend.DecTime(*next), true, nil
}

// Get implements crawlstate.State.
func (s *State) Get(ctx context.Context, source, u string) (crawlstate.Row, error) {
	rows, err := s.queryRows(ctx, nil, source, `SELECT `+rowColumns+` FROM {s}.pages WHERE source = $1 AND url = $2`, source, u)
	if err != nil {
		return crawlstate.Row{}, fmt.Errorf("crawlstate/postgres: get %q of source %q: %w", u, source, err)
	}
	if len(rows) == 0 {
		return crawlstate.Row{}, fmt.Errorf("crawlstate/postgres: get %q of source %q: %w", u, source, crawlstate.ErrNotFound)
	}
	return rows[0], nil
}

// Count implements crawlstate.State.
func (s *State) Count(ctx context.Context, source string) (total, gone int, err error) {
	err = s.pool.QueryRow(ctx, s.q(`SELECT count(*), count(*) FILTER (WHERE gone) FROM {s}.pages WHERE source = $1`), source).Scan(&total, &gone)
	if err != nil {
		return 0, 0, fmt.Errorf("crawlstate/postgres: count of source %q: %w", source, err)
	}
	return total, gone, nil
}

// PlanRows implements crawlstate.PlanLister.
func (s *State) PlanRows(ctx context.Context, source, after string, limit int) ([]crawlstate.Row, error) {
	return s.liveRows(ctx, "plan rows", planColumns, source, after, limit)
}

// LiveRows implements crawlstate.LiveLister.
func (s *State) LiveRows(ctx context.Context, source, after string, limit int) ([]crawlstate.Row, error) {
	return s.liveRows(ctx, "live rows", rowColumns, source, after, limit)
}

func (s *State) liveRows(ctx context.Context, op, columns, source, after string, limit int) ([]crawlstate.Row, error) {
	if err := check.Limit(op, limit); err != nil {
		return nil, err
	}
	out, err := s.queryRows(ctx, nil, source, `SELECT `+columns+` FROM {s}.pages
WHERE source = $1 AND url > $2 AND NOT gone ORDER BY url LIMIT $3`, source, after, limit)
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: %s of source %q: %w", op, source, err)
	}
	return out, nil
}

// qualify prefixes every column of a rowColumns-style list with prefix.
func qualify(columns, prefix string) string {
	parts := strings.Split(columns, ",")
	for i, p := range parts {
		parts[i] = prefix + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

// sortRows orders rows by (NextCheck, URL), the due queue's order.
func sortRows(rows []crawlstate.Row) {
	slices.SortFunc(rows, func(a, b crawlstate.Row) int {
		if c := a.NextCheck.Compare(b.NextCheck); c != 0 {
			return c
		}
		return strings.Compare(a.URL, b.URL)
	})
}
