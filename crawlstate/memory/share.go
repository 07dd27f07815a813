package memory

import (
	"context"
	"slices"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
)

// offer is the rows of a source offered for one run: those nobody holds,
// in the order Claim hands them out, and the leased ones, by expiry, so
// that Claim finds the expired leases and the earliest other one without
// walking every lease.
type offer struct {
	free    sortedList                    // unleased rows by (NextCheck, URL)
	leased  sortedList                    // leased rows by (lease expiry, URL), expired or not
	byOwner map[string]map[*page]struct{} // leased rows by owner
}

func newOffer() *offer {
	return &offer{free: newList(cmpDue), leased: newList(cmpDue), byOwner: make(map[string]map[*page]struct{})}
}

func dueEntry(p *page) entry   { return entry{at: p.row.NextCheck, url: p.row.URL, p: p} }
func leaseEntry(p *page) entry { return entry{at: p.leaseExpires, url: p.row.URL, p: p} }

// offerRow adds p, which is not offered, to the offer of run.
func (src *source) offerRow(p *page, run time.Time) {
	o := src.offer[run]
	if o == nil {
		o = newOffer()
		src.offer[run] = o
	}
	o.free.insert(dueEntry(p))
	p.offered, p.offerRun = true, run
}

// unoffer ends p's offer and lease.
func (src *source) unoffer(p *page) {
	if !p.offered {
		return
	}
	o := src.offer[p.offerRun]
	if p.leaseOwner != "" {
		o.dropLease(p)
	} else {
		o.free.delete(dueEntry(p))
	}
	if o.free.Len() == 0 && o.leased.Len() == 0 {
		delete(src.offer, p.offerRun)
	}
	p.offered, p.offerRun = false, time.Time{}
}

// dropLease takes leased p out of the lease indexes and clears its lease.
func (o *offer) dropLease(p *page) {
	o.leased.delete(leaseEntry(p))
	m := o.byOwner[p.leaseOwner]
	delete(m, p)
	if len(m) == 0 {
		delete(o.byOwner, p.leaseOwner)
	}
	p.leaseOwner, p.leaseExpires = "", time.Time{}
}

// lease leases offered p to owner until expires, taking it over from its
// holder, if any.
func (o *offer) lease(p *page, owner string, expires time.Time) {
	if p.leaseOwner != "" {
		o.dropLease(p)
	} else {
		o.free.delete(dueEntry(p))
	}
	p.leaseOwner, p.leaseExpires = owner, expires
	o.leased.insert(leaseEntry(p))
	m := o.byOwner[owner]
	if m == nil {
		m = make(map[*page]struct{})
		o.byOwner[owner] = m
	}
	m[p] = struct{}{}
}

// release ends p's lease; p stays offered.
func (o *offer) release(p *page) {
	o.dropLease(p)
	o.free.insert(dueEntry(p))
}

// Offer implements crawlstate.Sharer. A URL given twice is offered (and
// counted) once; gone and excluded rows are offered like the others.
func (s *State) Offer(ctx context.Context, source string, run time.Time, owner string, urls []string) (int, error) {
	const op = "offer"
	if err := check.Offer(source, run, owner); err != nil {
		return 0, err
	}
	if err := s.write(ctx, op); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	if l, held := s.locks[source]; !held || l.Owner != owner {
		return 0, check.NotLocker(source, owner)
	}
	src := s.src(source, false)
	if src == nil || len(urls) == 0 {
		return 0, nil
	}
	run = ut(run)
	seen := make(map[string]struct{}, len(urls))
	n := 0
	for _, u := range urls {
		if _, dup := seen[u]; dup {
			continue
		}
		seen[u] = struct{}{}
		p := src.pages[u]
		if p == nil {
			continue
		}
		src.unoffer(p)
		src.offerRow(p, run)
		n++
	}
	return n, nil
}

// Claim implements crawlstate.Sharer. It walks the run's offered rows in
// (NextCheck, URL) order, skipping those leased until after now; under the
// State's lock, so two Claims never return the same row.
func (s *State) Claim(ctx context.Context, source string, run time.Time, owner string, now time.Time, ttl time.Duration, limit int) ([]crawlstate.Row, int, time.Time, error) {
	const op = "claim"
	if err := check.Claim(source, owner, ttl, limit); err != nil {
		return nil, 0, time.Time{}, err
	}
	if err := s.write(ctx, op); err != nil {
		return nil, 0, time.Time{}, err
	}
	defer s.mu.Unlock()
	rows := []crawlstate.Row{}
	src := s.src(source, false)
	if src == nil {
		return rows, 0, time.Time{}, nil
	}
	o := src.offer[ut(run)]
	if o == nil {
		return rows, 0, time.Time{}, nil
	}
	now = ut(now)
	// The candidates: the expired leases, then as many free rows as
	// could be picked, merged in (NextCheck, URL) order.
	var expired []*page
	o.leased.all(func(e entry) bool {
		if cmpTime(e.at, now) > 0 {
			return false
		}
		expired = append(expired, e.p)
		return true
	})
	slices.SortFunc(expired, func(a, b *page) int { return cmpDue(dueEntry(a), dueEntry(b)) })
	picked := make([]*page, 0, min(backend.Prealloc(limit), o.free.Len()+len(expired)))
	o.free.all(func(e entry) bool {
		for len(expired) > 0 && len(picked) < limit && cmpDue(dueEntry(expired[0]), e) < 0 {
			picked, expired = append(picked, expired[0]), expired[1:]
		}
		if len(picked) < limit {
			picked = append(picked, e.p)
		}
		return len(picked) < limit
	})
	for len(expired) > 0 && len(picked) < limit {
		picked, expired = append(picked, expired[0]), expired[1:]
	}
	expires := now.Add(ttl)
	for _, p := range picked {
		o.lease(p, owner, expires)
	}
	rows = copyRows(picked, false)

	// pending: the unexpired leases of other owners; next: the earliest
	// of them, the first in expiry order after the expired ones that is
	// not owner's.
	unexpired, own := o.leased.Len(), len(o.byOwner[owner])
	var next time.Time
	nextFound := false
	o.leased.all(func(e entry) bool {
		if cmpTime(e.at, now) <= 0 {
			unexpired--
			if e.p.leaseOwner == owner {
				own--
			}
			return true
		}
		if e.p.leaseOwner == owner {
			return true
		}
		next, nextFound = e.at, true
		return false
	})
	pending := unexpired - own
	if !nextFound || pending == 0 {
		next = time.Time{}
	}
	return rows, pending, next, nil
}

// Extend implements crawlstate.Sharer.
func (s *State) Extend(ctx context.Context, source, owner string, now time.Time, ttl time.Duration) (int, error) {
	const op = "extend"
	if err := check.Lease(op, source, owner, ttl); err != nil {
		return 0, err
	}
	if err := s.write(ctx, op); err != nil {
		return 0, err
	}
	defer s.mu.Unlock()
	src := s.src(source, false)
	if src == nil {
		return 0, nil
	}
	expires := ut(now).Add(ttl)
	n := 0
	for _, o := range src.offer {
		for p := range o.byOwner[owner] {
			o.leased.delete(leaseEntry(p))
			p.leaseExpires = expires
			o.leased.insert(leaseEntry(p))
			n++
		}
	}
	return n, nil
}

// Renew implements crawlstate.Sharer.
func (s *State) Renew(ctx context.Context, source, owner string, urls []string, now time.Time, ttl time.Duration) ([]string, error) {
	const op = "renew"
	if err := check.Lease(op, source, owner, ttl); err != nil {
		return nil, err
	}
	if err := s.write(ctx, op); err != nil {
		return nil, err
	}
	defer s.mu.Unlock()
	held := []string{}
	src := s.src(source, false)
	if src == nil {
		return held, nil
	}
	expires := ut(now).Add(ttl)
	seen := make(map[string]bool, len(urls))
	for _, u := range urls {
		p := src.pages[u]
		if p == nil || !p.offered || p.leaseOwner != owner || seen[u] {
			continue
		}
		seen[u] = true
		o := src.offer[p.offerRun]
		o.leased.delete(leaseEntry(p))
		p.leaseExpires = expires
		o.leased.insert(leaseEntry(p))
		held = append(held, u)
	}
	return held, nil
}

// holds reports whether a write fenced by lease may change p: no fence,
// or lease holds p's lease.
func holds(p *page, lease string) bool {
	return lease == "" || (p.offered && p.leaseOwner == lease)
}

// Release implements crawlstate.Sharer.
func (s *State) Release(ctx context.Context, source, owner string, urls []string) error {
	const op = "release"
	if err := check.Owner(op, source, owner); err != nil {
		return err
	}
	if err := s.write(ctx, op); err != nil {
		return err
	}
	defer s.mu.Unlock()
	src := s.src(source, false)
	if src == nil {
		return nil
	}
	if urls == nil {
		for _, o := range src.offer {
			for p := range o.byOwner[owner] {
				o.release(p)
			}
		}
		return nil
	}
	for _, u := range urls {
		if p := src.pages[u]; p != nil && p.offered && p.leaseOwner == owner {
			src.offer[p.offerRun].release(p)
		}
	}
	return nil
}

// Withdraw implements crawlstate.Sharer: the rows of urls that owner
// holds (its lease expired or not) are no longer offered; nothing else
// of them changes.
func (s *State) Withdraw(ctx context.Context, source, owner string, urls []string) error {
	const op = "withdraw"
	if err := check.Owner(op, source, owner); err != nil {
		return err
	}
	if err := s.write(ctx, op); err != nil {
		return err
	}
	defer s.mu.Unlock()
	src := s.src(source, false)
	if src == nil {
		return nil
	}
	for _, u := range urls {
		if p := src.pages[u]; p != nil && p.offered && p.leaseOwner == owner {
			src.unoffer(p)
		}
	}
	return nil
}

// ClaimAlert implements crawlstate.Sharer. An owner may claim again an
// alert it holds (which extends its lease).
func (s *State) ClaimAlert(ctx context.Context, id, owner string, now time.Time, ttl time.Duration) (bool, error) {
	const op = "claim alert"
	if err := check.AlertLease(id, owner, ttl); err != nil {
		return false, err
	}
	if err := s.write(ctx, op); err != nil {
		return false, err
	}
	defer s.mu.Unlock()
	rec, ok := s.alerts[id]
	if !ok {
		return false, check.NoSuchAlert(op, id)
	}
	now = ut(now)
	if !rec.a.DeliveredAt.IsZero() || (rec.leaseOwner != "" && rec.leaseOwner != owner && cmpTime(rec.leaseExpires, now) > 0) {
		return false, nil
	}
	rec.leaseOwner, rec.leaseExpires = owner, now.Add(ttl)
	return true, nil
}
