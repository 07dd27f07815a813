package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
)

// Interfaces the State implements beside crawlstate.State.
var (
	_ crawlstate.Sharer        = (*State)(nil)
	_ crawlstate.PlanLister    = (*State)(nil)
	_ crawlstate.LiveLister    = (*State)(nil)
	_ crawlstate.RunLog        = (*State)(nil)
	_ crawlstate.PageDetails   = (*State)(nil)
	_ crawlstate.VectorCache   = (*State)(nil)
	_ crawlstate.AlertOutbox   = (*State)(nil)
	_ crawlstate.DocumentStore = (*State)(nil)
	_ crawlstate.EventLog      = (*State)(nil)
	_ crawlstate.TrustStore    = (*State)(nil)
)

// offerSQL offers the rows of urls $3 for run $2 and ends their leases,
// while owner $4 holds the source's run lock: the lock row is read FOR
// SHARE, so a Lock that takes it over waits for the offer to commit. It
// returns whether the lock is held and how many rows it offered.
var offerSQL = `
WITH l AS (SELECT 1 FROM {s}.run_locks WHERE source = $1 AND owner = $4 FOR SHARE),
u AS (
	UPDATE {s}.pages SET offer_run = $2, lease_owner = NULL, lease_expires = NULL
	WHERE source = $1 AND url = ANY($3::text[]) AND EXISTS (SELECT 1 FROM l)
	RETURNING 1
)
SELECT EXISTS (SELECT 1 FROM l), (SELECT count(*) FROM u)`

// Offer implements crawlstate.Sharer: one statement that checks the run
// lock, marks the rows of urls offered for run and ends their leases.
func (s *State) Offer(ctx context.Context, source string, run time.Time, owner string, urls []string) (int, error) {
	const op = "offer"
	if err := check.Offer(source, run, owner); err != nil {
		return 0, err
	}
	if len(urls) == 0 {
		return 0, ctx.Err()
	}
	var (
		locked bool
		n      int
	)
	if err := s.pool.QueryRow(ctx, s.q(offerSQL), source, backend.EncTime(run), urls, owner).Scan(&locked, &n); err != nil {
		return 0, fmt.Errorf("crawlstate/postgres: %s of %q: %w", op, source, err)
	}
	if !locked {
		return 0, check.NotLocker(source, owner)
	}
	return n, nil
}

// claimSQL leases up to $6 offered rows of run $2 to owner $3 until $5,
// rows that nobody holds unexpired at $4, skipping rows another
// transaction has locked (a concurrent Claim), and returns them whole.
var claimSQL = `
WITH picked AS (
	SELECT url FROM {s}.pages
	WHERE source = $1 AND offer_run = $2
		AND (lease_owner IS NULL OR lease_expires <= $4)
	ORDER BY next_check, url
	LIMIT $6
	FOR UPDATE SKIP LOCKED
)
UPDATE {s}.pages p SET lease_owner = $3, lease_expires = $5
FROM picked WHERE p.source = $1 AND p.url = picked.url
RETURNING ` + qualifiedRowColumns

// qualifiedRowColumns is rowColumns of the pages table aliased p.
var qualifiedRowColumns = rowColumnsOf("p")

// Claim implements crawlstate.Sharer. It selects the rows with SELECT ...
// FOR UPDATE SKIP LOCKED and writes owner and expiry in the same
// statement, so two Claims at once never return the same row. A row owner
// already holds unexpired is not returned again (Extend renews it), so a
// worker that claims until nothing is left ends.
func (s *State) Claim(ctx context.Context, source string, run time.Time, owner string, now time.Time, ttl time.Duration, limit int) ([]crawlstate.Row, int, time.Time, error) {
	const op = "claim"
	if err := check.Claim(source, owner, ttl, limit); err != nil {
		return nil, 0, time.Time{}, err
	}
	var (
		rows    []crawlstate.Row
		pending int
		next    *int64
	)
	err := s.withTx(ctx, op, func(tx pgx.Tx) error {
		var err error
		rows, err = s.queryRows(ctx, tx, source, claimSQL, source, backend.EncTime(run), owner, backend.EncTime(now), backend.EncTime(now.Add(ttl)), limit)
		if err != nil {
			return fmt.Errorf("crawlstate/postgres: %s of %q: %w", op, source, err)
		}
		err = tx.QueryRow(ctx, s.q(`SELECT count(*), min(lease_expires) FROM {s}.pages
WHERE source = $1 AND offer_run = $2 AND lease_owner <> $3 AND lease_expires > $4`), source, backend.EncTime(run), owner, backend.EncTime(now)).
			Scan(&pending, &next)
		if err != nil {
			return fmt.Errorf("crawlstate/postgres: %s of %q: pending: %w", op, source, err)
		}
		return nil
	})
	if err != nil {
		return nil, 0, time.Time{}, err
	}
	// RETURNING gives no order: the contract's is (NextCheck, URL).
	sortRows(rows)
	var nextT time.Time
	if next != nil && pending > 0 {
		nextT = backend.DecTime(*next)
	}
	if rows == nil {
		rows = []crawlstate.Row{}
	}
	return rows, pending, nextT, nil
}

// extendSQL moves the expiry of owner $2's leases on source $1 to $3. It
// skips the rows another transaction holds locked, a Record of the owner's
// committer above all: waiting for them would deadlock against a Record
// that locks the same rows in another order, and Record ends their lease
// anyway.
var extendSQL = `UPDATE {s}.pages p SET lease_expires = $3
FROM (SELECT url FROM {s}.pages WHERE source = $1 AND lease_owner = $2 FOR UPDATE SKIP LOCKED) l
WHERE p.source = $1 AND p.url = l.url`

// Extend implements crawlstate.Sharer.
func (s *State) Extend(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) (int, error) {
	const op = "extend"
	if err := check.Lease(op, source, owner, ttl); err != nil {
		return 0, err
	}
	tag, err := s.pool.Exec(ctx, s.q(extendSQL), source, owner, backend.EncTime(now.Add(ttl)))
	if err != nil {
		return 0, fmt.Errorf("crawlstate/postgres: %s of %q: %w", op, source, err)
	}
	return int(tag.RowsAffected()), nil
}

// Renew implements crawlstate.Sharer: one UPDATE of owner's leases among
// urls, which returns the URLs it renewed.
func (s *State) Renew(ctx context.Context, source, owner string, urls []string, now time.Time, ttl time.Duration) ([]string, error) {
	const op = "renew"
	if err := check.Lease(op, source, owner, ttl); err != nil {
		return nil, err
	}
	held := []string{}
	if len(urls) == 0 {
		return held, ctx.Err()
	}
	rows, err := s.pool.Query(ctx, s.q(`UPDATE {s}.pages SET lease_expires = $4
WHERE source = $1 AND lease_owner = $2 AND offer_run IS NOT NULL AND url = ANY($3::text[])
RETURNING url`), source, owner, urls, backend.EncTime(now.Add(ttl)))
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: %s of %q: %w", op, source, err)
	}
	got, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("crawlstate/postgres: %s of %q: %w", op, source, err)
	}
	renewed := make(map[string]bool, len(got))
	for _, u := range got {
		renewed[u] = true
	}
	for _, u := range urls {
		if renewed[u] {
			held = append(held, u)
			renewed[u] = false // a URL given twice is returned once
		}
	}
	return held, nil
}

// Release implements crawlstate.Sharer.
func (s *State) Release(ctx context.Context, source, owner string, urls []string) error {
	const op = "release"
	if err := check.Owner(op, source, owner); err != nil {
		return err
	}
	var err error
	switch {
	case urls == nil:
		_, err = s.pool.Exec(ctx, s.q(`UPDATE {s}.pages SET lease_owner = NULL, lease_expires = NULL
WHERE source = $1 AND lease_owner = $2`), source, owner)
	case len(urls) == 0:
		return ctx.Err()
	default:
		_, err = s.pool.Exec(ctx, s.q(`UPDATE {s}.pages SET lease_owner = NULL, lease_expires = NULL
WHERE source = $1 AND lease_owner = $2 AND url = ANY($3::text[])`), source, owner, urls)
	}
	if err != nil {
		return fmt.Errorf("crawlstate/postgres: %s of %q: %w", op, source, err)
	}
	return nil
}

// ClaimAlert implements crawlstate.Sharer. The alert's row is the lock:
// one UPDATE takes the lease when the alert is pending and not held by
// another owner, and PostgreSQL serialises concurrent UPDATEs of the row.
func (s *State) ClaimAlert(ctx context.Context, id, owner string, now time.Time, ttl time.Duration) (bool, error) {
	const op = "claim alert"
	if err := check.AlertLease(id, owner, ttl); err != nil {
		return false, err
	}
	tag, err := s.pool.Exec(ctx, s.q(`UPDATE {s}.alerts SET lease_owner = $2, lease_expires = $4
WHERE id = $1 AND delivered_at = -9223372036854775808
	AND (lease_owner IS NULL OR lease_owner = $2 OR lease_expires <= $3)`), id, owner, backend.EncTime(now), backend.EncTime(now.Add(ttl)))
	if err != nil {
		return false, fmt.Errorf("crawlstate/postgres: %s %q: %w", op, id, err)
	}
	if tag.RowsAffected() == 1 {
		return true, nil
	}
	if err := s.alertExists(ctx, op, id); err != nil {
		return false, err
	}
	return false, nil
}
