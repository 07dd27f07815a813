package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
)

// recordSQL stores a round of results (each URL once), one per element of
// the arrays, and returns the URLs it updated. An excluded result ($23
// not empty) sets the fetch time, resets failures and leaves the due
// queue; any other is stored as crawlstate.Result documents. Every
// result ends the row's offer and lease.
const recordSQL = `
UPDATE {s}.pages p SET
	last_fetched    = r.at,
	failures        = 0,
	gone            = CASE WHEN r.excluded <> '' THEN false ELSE r.gone END,
	visits          = p.visits + CASE WHEN r.excluded <> '' OR r.gone THEN 0 ELSE 1 END,
	changes         = p.changes + CASE WHEN r.excluded = '' AND NOT r.gone AND r.changed THEN 1 ELSE 0 END,
	content_hash    = CASE WHEN r.excluded <> '' OR r.gone OR r.not_modified OR r.hash = '' THEN p.content_hash ELSE r.hash END,
	etag            = CASE WHEN r.excluded <> '' OR r.gone OR (r.not_modified AND r.etag = '') THEN p.etag ELSE r.etag END,
	last_modified   = CASE WHEN r.excluded <> '' OR r.gone OR (r.not_modified AND r.last_modified = '') THEN p.last_modified ELSE r.last_modified END,
	interval_ns     = CASE WHEN r.excluded <> '' OR r.gone THEN p.interval_ns ELSE r.interval_ns END,
	next_check      = CASE WHEN r.excluded <> '' THEN 9223372036854775807 WHEN r.gone THEN p.next_check ELSE r.next_check END,
	title           = CASE WHEN r.body THEN r.title ELSE p.title END,
	canonical       = CASE WHEN r.body THEN r.canonical ELSE p.canonical END,
	alias_of        = CASE WHEN r.body THEN r.alias_of ELSE p.alias_of END,
	last_changed    = CASE WHEN r.stats THEN r.last_changed ELSE p.last_changed END,
	elapsed_ns      = CASE WHEN r.stats THEN r.elapsed_ns ELSE p.elapsed_ns END,
	recent          = CASE WHEN r.stats THEN r.recent ELSE p.recent END,
	origin_modified = CASE WHEN r.stats THEN r.origin_modified ELSE p.origin_modified END,
	change_rate     = CASE WHEN r.stats THEN r.change_rate ELSE p.change_rate END,
	weight          = CASE WHEN r.stats THEN r.weight ELSE p.weight END,
	excluded        = r.excluded,
	offer_run       = NULL,
	lease_owner     = NULL,
	lease_expires   = NULL
FROM unnest($2::text[], $3::bigint[], $4::boolean[], $5::boolean[], $6::boolean[], $7::text[], $8::text[], $9::text[],
	$10::bigint[], $11::bigint[], $12::boolean[], $13::text[], $14::text[], $15::text[], $16::boolean[],
	$17::bigint[], $18::bigint[], $19::bytea[], $20::bigint[], $21::double precision[], $22::double precision[], $23::text[],
	$24::text[])
	AS r(url, at, gone, not_modified, changed, hash, etag, last_modified,
	interval_ns, next_check, body, title, canonical, alias_of, stats,
	last_changed, elapsed_ns, recent, origin_modified, change_rate, weight, excluded, lease)
WHERE p.source = $1 AND p.url = r.url AND (r.lease = '' OR (p.lease_owner = r.lease AND p.offer_run IS NOT NULL))
RETURNING p.url`

// fenceSQL locks the rows of a fenced batch ($2) in URL order and tells
// for each whether the writer ($3) holds its lease; those it does not
// are left out of the batch. The rows stay locked until the batch
// commits (Claim skips locked rows), so the lease compared in recordSQL's
// WHERE is the one read here.
const fenceSQL = `SELECT url, lease_owner IS NOT DISTINCT FROM $3 AND offer_run IS NOT NULL FROM {s}.pages
WHERE source = $1 AND url = ANY($2::text[])
ORDER BY url FOR UPDATE`

// The statements of the parts of a round beside the rows.
const (
	deleteLinksSQL = `DELETE FROM {s}.links WHERE source = $1 AND url = ANY($2::text[])`
	// The links of several pages come flattened: page URL, position,
	// link.
	putLinksSQL = `
INSERT INTO {s}.links (source, url, links)
SELECT $1, url, array_agg(link ORDER BY pos) FROM unnest($2::text[], $3::integer[], $4::text[]) AS l(url, pos, link)
GROUP BY url
ON CONFLICT (source, url) DO UPDATE SET links = excluded.links`
	deleteChunksSQL = `DELETE FROM {s}.chunks WHERE source = $1 AND url = ANY($2::text[])`
	insertChunksSQL = `
INSERT INTO {s}.chunks (source, url, ordinal, text_hash, record_id, heading_path, start_byte, end_byte, text)
SELECT $1, * FROM unnest($2::text[], $3::integer[], $4::text[], $5::text[], $6::text[], $7::integer[], $8::integer[], $9::text[])`
	// An alert already stored is left as it is: a replay never duplicates
	// it nor makes a delivered one pending again.
	insertAlertsSQL = `
INSERT INTO {s}.alerts (id, source, url, kind, created_at, payload)
SELECT id, $1, url, kind, created_at, payload FROM unnest($2::text[], $3::text[], $4::text[], $5::bigint[], $6::bytea[])
	AS a(id, url, kind, created_at, payload)
ON CONFLICT (id) DO NOTHING`
	// Events are stored in the order given (their identity numbers grow
	// with it).
	insertEventsSQL = `
INSERT INTO {s}.events (source, url, at, stage, attempt, ok, err, detail)
SELECT $1, url, at, stage, attempt, ok, err, detail
FROM unnest($2::text[], $3::bigint[], $4::text[], $5::integer[], $6::boolean[], $7::text[], $8::text[])
	WITH ORDINALITY AS e(url, at, stage, attempt, ok, err, detail, n)
ORDER BY n`
)

// Record implements crawlstate.State: the whole batch is one transaction.
// Results are written in rounds of distinct URLs (a URL recorded twice in
// a batch is written twice, in order); each round is one UPDATE over
// arrays and one INSERT or DELETE per kind of detail, sent to the server
// as one pgx batch. An unknown URL rolls the whole batch back and the
// error wraps crawlstate.ErrNotFound.
func (s *State) Record(ctx context.Context, source string, results []crawlstate.Result) error {
	const op = "record"
	if err := check.Results(source, results); err != nil {
		return err
	}
	if len(results) == 0 {
		return ctx.Err()
	}
	var lost *crawlstate.LeaseLostError
	err := s.withTx(ctx, op, func(tx pgx.Tx) error {
		kept := results
		var err error
		if kept, lost, err = s.fence(ctx, tx, source, results); err != nil {
			return err
		}
		for _, round := range rounds(kept) {
			if err := s.recordRound(ctx, tx, source, round); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil && lost != nil {
		return lost
	}
	return err
}

// fence leaves out of results those fenced by a lease (Result.Lease) that
// their writer no longer holds, locking the rows of the others, and names
// them in a *LeaseLostError. Results without a lease pass.
func (s *State) fence(ctx context.Context, tx pgx.Tx, source string, results []crawlstate.Result) ([]crawlstate.Result, *crawlstate.LeaseLostError, error) {
	byOwner := map[string][]string{}
	for i := range results {
		if l := results[i].Lease; l != "" {
			byOwner[l] = append(byOwner[l], results[i].URL)
		}
	}
	if len(byOwner) == 0 {
		return results, nil, nil
	}
	gone := map[string]bool{} // "owner\x00url" of the lost results
	var lost *crawlstate.LeaseLostError
	for owner, urls := range byOwner {
		rows, err := tx.Query(ctx, s.q(fenceSQL), source, urls, owner)
		if err != nil {
			return nil, nil, fmt.Errorf("crawlstate/postgres: record of %q: checking leases: %w", source, err)
		}
		var (
			u    string
			held bool
		)
		_, err = pgx.ForEachRow(rows, []any{&u, &held}, func() error {
			if !held {
				gone[owner+"\x00"+u] = true
			}
			return nil
		})
		if err != nil {
			return nil, nil, fmt.Errorf("crawlstate/postgres: record of %q: checking leases: %w", source, err)
		}
	}
	if len(gone) == 0 {
		return results, nil, nil
	}
	kept := make([]crawlstate.Result, 0, len(results))
	for i := range results {
		r := &results[i]
		if r.Lease != "" && gone[r.Lease+"\x00"+r.URL] {
			if lost == nil {
				lost = &crawlstate.LeaseLostError{Source: source, Owner: r.Lease}
			}
			lost.URLs = append(lost.URLs, r.URL)
			continue
		}
		kept = append(kept, *r)
	}
	return kept, lost, nil
}

// rounds splits results into rounds in which each URL appears once,
// keeping the order of the results of one URL.
func rounds(results []crawlstate.Result) [][]*crawlstate.Result {
	var out [][]*crawlstate.Result
	seen := make(map[string]int, len(results)) // URL -> results of it so far
	for i := range results {
		r := &results[i]
		k := seen[r.URL]
		seen[r.URL] = k + 1
		if k == len(out) {
			out = append(out, nil)
		}
		out[k] = append(out[k], r)
	}
	return out
}

// roundArgs are the arrays of one round's statements.
type roundArgs struct {
	url, hash, etag, lastModified, title, canonical, aliasOf, excluded []string
	lease                                                              []string
	at, interval, next, lastChanged, elapsed, originModified           []int64
	gone, notModified, changed, body, stats                            []bool
	recent                                                             [][]byte
	changeRate, weight                                                 []float64

	noLinks                []string
	linkURL, link          []string
	linkPos                []int32
	replaceChunks          []string
	chunkURL, chunkHash    []string
	chunkRecord, chunkPath []string
	chunkText              []string
	chunkOrd, chunkStart   []int32
	chunkEnd               []int32
	alertID, alertURL      []string
	alertKind              []string
	alertCreated           []int64
	alertPayload           [][]byte
	eventURL, eventStage   []string
	eventErr, eventDetail  []string
	eventAt                []int64
	eventAttempt           []int32
	eventOK                []bool
}

func (a *roundArgs) add(r *crawlstate.Result) {
	ex := r.Excluded != ""
	var st crawlstate.Stats
	if r.Stats != nil && !ex {
		st = *r.Stats
	}
	a.url = append(a.url, r.URL)
	a.at = append(a.at, backend.EncTime(r.At))
	a.gone = append(a.gone, r.Gone)
	a.notModified = append(a.notModified, r.NotModified)
	a.changed = append(a.changed, r.Changed)
	a.hash = append(a.hash, r.ContentHash)
	a.etag = append(a.etag, r.ETag)
	a.lastModified = append(a.lastModified, r.LastModified)
	a.interval = append(a.interval, int64(r.Interval))
	a.next = append(a.next, backend.EncTime(r.NextCheck))
	a.body = append(a.body, !ex && !r.Gone && !r.NotModified)
	a.title = append(a.title, r.Title)
	a.canonical = append(a.canonical, r.Canonical)
	a.aliasOf = append(a.aliasOf, r.AliasOf)
	a.stats = append(a.stats, r.Stats != nil && !ex)
	a.lastChanged = append(a.lastChanged, backend.EncTime(st.LastChanged))
	a.elapsed = append(a.elapsed, int64(st.Elapsed))
	a.recent = append(a.recent, encodeChecks(st.Recent))
	a.originModified = append(a.originModified, backend.EncTime(st.LastModified))
	a.changeRate = append(a.changeRate, st.ChangeRate)
	a.weight = append(a.weight, st.Weight)
	a.excluded = append(a.excluded, r.Excluded)
	a.lease = append(a.lease, r.Lease)

	for _, e := range r.Events {
		u := e.URL
		if u == "" {
			u = r.URL
		}
		a.eventURL = append(a.eventURL, u)
		a.eventAt = append(a.eventAt, backend.EncTime(e.At))
		a.eventStage = append(a.eventStage, e.Stage)
		a.eventAttempt = append(a.eventAttempt, int32(e.Attempt))
		a.eventOK = append(a.eventOK, e.OK)
		a.eventErr = append(a.eventErr, e.Err)
		a.eventDetail = append(a.eventDetail, e.Detail)
	}
	if ex {
		return // an exclusion keeps links, chunks; it carries no alert
	}
	switch {
	case r.Links == nil:
	case len(r.Links) == 0:
		a.noLinks = append(a.noLinks, r.URL)
	default:
		for i, l := range r.Links {
			a.linkURL = append(a.linkURL, r.URL)
			a.linkPos = append(a.linkPos, int32(i))
			a.link = append(a.link, l)
		}
	}
	if r.Gone || r.ReplaceChunks {
		a.replaceChunks = append(a.replaceChunks, r.URL)
	}
	if r.ReplaceChunks && !r.Gone {
		for _, c := range r.Chunks {
			a.chunkURL = append(a.chunkURL, r.URL)
			a.chunkOrd = append(a.chunkOrd, int32(c.Ordinal))
			a.chunkHash = append(a.chunkHash, c.TextHash)
			a.chunkRecord = append(a.chunkRecord, c.RecordID)
			a.chunkPath = append(a.chunkPath, c.HeadingPath)
			a.chunkStart = append(a.chunkStart, int32(c.Start))
			a.chunkEnd = append(a.chunkEnd, int32(c.End))
			a.chunkText = append(a.chunkText, c.Text)
		}
	}
	if r.Alert != nil {
		al := backend.StoredAlert("", r) // the statement takes the source once
		a.alertID = append(a.alertID, al.ID)
		a.alertURL = append(a.alertURL, al.URL)
		a.alertKind = append(a.alertKind, al.Kind)
		a.alertCreated = append(a.alertCreated, backend.EncTime(al.CreatedAt))
		a.alertPayload = append(a.alertPayload, al.Payload)
	}
}

// recordRound writes one round of results (distinct URLs) in one batch.
func (s *State) recordRound(ctx context.Context, tx pgx.Tx, source string, round []*crawlstate.Result) error {
	const op = "record"
	var a roundArgs
	for _, r := range round {
		a.add(r)
	}
	b := &pgx.Batch{}
	b.Queue(s.q(recordSQL), source, a.url, a.at, a.gone, a.notModified, a.changed, a.hash, a.etag, a.lastModified,
		a.interval, a.next, a.body, a.title, a.canonical, a.aliasOf, a.stats,
		a.lastChanged, a.elapsed, a.recent, a.originModified, a.changeRate, a.weight, a.excluded, a.lease)
	var parts []string // what each further statement writes, for errors
	if len(a.noLinks) > 0 {
		b.Queue(s.q(deleteLinksSQL), source, a.noLinks)
		parts = append(parts, "links")
	}
	if len(a.linkURL) > 0 {
		b.Queue(s.q(putLinksSQL), source, a.linkURL, a.linkPos, a.link)
		parts = append(parts, "links")
	}
	if len(a.replaceChunks) > 0 {
		b.Queue(s.q(deleteChunksSQL), source, a.replaceChunks)
		parts = append(parts, "chunks")
	}
	if len(a.chunkURL) > 0 {
		b.Queue(s.q(insertChunksSQL), source, a.chunkURL, a.chunkOrd, a.chunkHash, a.chunkRecord, a.chunkPath,
			a.chunkStart, a.chunkEnd, a.chunkText)
		parts = append(parts, "chunks")
	}
	if len(a.alertID) > 0 {
		b.Queue(s.q(insertAlertsSQL), source, a.alertID, a.alertURL, a.alertKind, a.alertCreated, a.alertPayload)
		parts = append(parts, "alerts")
	}
	if len(a.eventURL) > 0 {
		b.Queue(s.q(insertEventsSQL), source, a.eventURL, a.eventAt, a.eventStage, a.eventAttempt, a.eventOK,
			a.eventErr, a.eventDetail)
		parts = append(parts, "events")
	}
	br := tx.SendBatch(ctx, b)
	updated := make(map[string]struct{}, len(round))
	rows, err := br.Query()
	if err == nil {
		var u string
		_, err = pgx.ForEachRow(rows, []any{&u}, func() error { updated[u] = struct{}{}; return nil })
	}
	if err != nil {
		_ = br.Close()
		return fmt.Errorf("crawlstate/postgres: %s %d results from %q: %w", op, len(round), round[0].URL, err)
	}
	for _, part := range parts {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return fmt.Errorf("crawlstate/postgres: %s: %s: %w", op, part, err)
		}
	}
	if err := br.Close(); err != nil {
		return fmt.Errorf("crawlstate/postgres: %s: %w", op, err)
	}
	if len(updated) < len(round) {
		for _, r := range round {
			if _, ok := updated[r.URL]; !ok {
				return check.NoSuchURL(op, source, r.URL)
			}
		}
	}
	return nil
}

// RecordFailure implements crawlstate.State; it ends the row's offer and
// lease.
func (s *State) RecordFailure(ctx context.Context, source string, f crawlstate.Failure) error {
	const op = "record failure"
	msg := backend.LastError(f)
	var retry *int64 // NULL keeps next_check
	if !f.RetryAt.IsZero() {
		v := backend.EncTime(f.RetryAt)
		retry = &v
	}
	tag, err := s.pool.Exec(ctx, s.q(`UPDATE {s}.pages SET failures = failures + 1, last_error = $1, last_stage = $2,
	last_failure = $3, next_check = coalesce($4, next_check), offer_run = NULL, lease_owner = NULL, lease_expires = NULL
WHERE source = $5 AND url = $6 AND ($7 = '' OR (lease_owner = $7 AND offer_run IS NOT NULL))`), msg, f.Stage, backend.EncTime(f.At), retry, source, f.URL, f.Lease)
	if err != nil {
		return fmt.Errorf("crawlstate/postgres: %s %q: %w", op, f.URL, err)
	}
	if tag.RowsAffected() == 1 {
		return nil
	}
	if f.Lease != "" {
		var exists bool
		if err := s.pool.QueryRow(ctx, s.q(`SELECT EXISTS (SELECT 1 FROM {s}.pages WHERE source = $1 AND url = $2)`), source, f.URL).Scan(&exists); err != nil {
			return fmt.Errorf("crawlstate/postgres: %s %q: %w", op, f.URL, err)
		}
		if exists {
			return &crawlstate.LeaseLostError{Source: source, Owner: f.Lease, URLs: []string{f.URL}}
		}
	}
	return check.NoSuchURL(op, source, f.URL)
}
