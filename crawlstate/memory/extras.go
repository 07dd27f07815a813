package memory

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
)

// Links implements crawlstate.PageDetails.
func (s *State) Links(ctx context.Context, source, u string) ([]string, error) {
	const op = "links"
	if err := s.read(ctx, op); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	p := s.lookup(source, u)
	if p == nil {
		return nil, check.NoSuchURL(op, source, u)
	}
	return slices.Clone(p.links), nil
}

// Chunks implements crawlstate.PageDetails.
func (s *State) Chunks(ctx context.Context, source, u string) ([]crawlstate.Chunk, error) {
	const op = "chunks"
	if err := s.read(ctx, op); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	p := s.lookup(source, u)
	if p == nil {
		return nil, check.NoSuchURL(op, source, u)
	}
	return slices.Clone(p.chunks), nil
}

// Vectors implements crawlstate.VectorCache. The vectors returned are
// copies.
func (s *State) Vectors(ctx context.Context, model string, textHashes []string) (map[string][]float32, error) {
	const op = "vectors"
	if err := check.Vectors(op, model, nil); err != nil {
		return nil, err
	}
	if err := s.read(ctx, op); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	out := make(map[string][]float32, len(textHashes))
	m := s.vectors[model]
	for _, h := range textHashes {
		if v, ok := m[h]; ok {
			out[h] = slices.Clone(v)
		}
	}
	return out, nil
}

// PutVectors implements crawlstate.VectorCache; it stores copies.
func (s *State) PutVectors(ctx context.Context, model string, vectors map[string][]float32) error {
	const op = "put vectors"
	if err := check.Vectors(op, model, vectors); err != nil {
		return err
	}
	if err := s.write(ctx, op); err != nil {
		return err
	}
	defer s.mu.Unlock()
	if len(vectors) == 0 {
		return nil
	}
	m := s.vectors[model]
	if m == nil {
		m = make(map[string][]float32, len(vectors))
		s.vectors[model] = m
	}
	for h, v := range vectors {
		m[h] = slices.Clone(v)
	}
	return nil
}

// alertRec is a stored alert and its delivery lease (Sharer.ClaimAlert).
type alertRec struct {
	a            crawlstate.Alert
	leaseOwner   string
	leaseExpires time.Time
}

// copyAlert returns a with a payload of its own (nil when empty).
func copyAlert(a crawlstate.Alert) crawlstate.Alert {
	if len(a.Payload) == 0 {
		a.Payload = nil
	} else {
		a.Payload = slices.Clone(a.Payload)
	}
	return a
}

// putAlert stores a checked alert of a result for u, pending, unless its
// ID is already stored.
func (s *State) putAlert(source, u string, a *crawlstate.Alert) {
	if _, ok := s.alerts[a.ID]; ok {
		return // a replay: the stored alert is left as it is
	}
	if a.URL != "" {
		u = a.URL
	}
	rec := &alertRec{a: copyAlert(crawlstate.Alert{
		ID: a.ID, Source: source, URL: u, Kind: a.Kind, CreatedAt: ut(a.CreatedAt), Payload: a.Payload,
	})}
	s.alerts[a.ID] = rec
	m := s.pending[source]
	if m == nil {
		m = make(map[string]*alertRec)
		s.pending[source] = m
	}
	m[a.ID] = rec
}

// PendingAlerts implements crawlstate.AlertOutbox.
func (s *State) PendingAlerts(ctx context.Context, source string, limit int) ([]crawlstate.Alert, error) {
	const op = "pending alerts"
	if err := check.Limit(op, limit); err != nil {
		return nil, err
	}
	if err := s.read(ctx, op); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	recs := make([]*alertRec, 0, len(s.pending[source]))
	for _, rec := range s.pending[source] {
		recs = append(recs, rec)
	}
	slices.SortFunc(recs, func(a, b *alertRec) int {
		return cmp.Or(cmpTime(a.a.CreatedAt, b.a.CreatedAt), strings.Compare(a.a.ID, b.a.ID))
	})
	var out []crawlstate.Alert
	for _, rec := range recs[:min(limit, len(recs))] {
		out = append(out, copyAlert(rec.a))
	}
	return out, nil
}

// AlertsSince implements crawlstate.AlertHistory.
func (s *State) AlertsSince(ctx context.Context, source string, since time.Time, afterID string, limit int) ([]crawlstate.Alert, error) {
	const op = "alerts since"
	switch {
	case limit < 1:
		return nil, fmt.Errorf("crawlstate/memory: %s: limit %d; pass a page size of at least 1", op, limit)
	case source == "":
		return nil, fmt.Errorf("crawlstate/memory: %s: empty source", op)
	}
	if err := s.read(ctx, op); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	var recs []*alertRec
	for _, rec := range s.alerts {
		a := rec.a
		if a.Source == source && (a.CreatedAt.After(since) || a.CreatedAt.Equal(since) && a.ID > afterID) {
			recs = append(recs, rec)
		}
	}
	slices.SortFunc(recs, func(a, b *alertRec) int {
		return cmp.Or(cmpTime(a.a.CreatedAt, b.a.CreatedAt), strings.Compare(a.a.ID, b.a.ID))
	})
	var out []crawlstate.Alert
	for _, rec := range recs[:min(limit, len(recs))] {
		out = append(out, copyAlert(rec.a))
	}
	return out, nil
}

// Alert implements crawlstate.AlertOutbox.
func (s *State) Alert(ctx context.Context, id string) (crawlstate.Alert, error) {
	const op = "alert"
	if err := s.read(ctx, op); err != nil {
		return crawlstate.Alert{}, err
	}
	defer s.mu.RUnlock()
	rec, ok := s.alerts[id]
	if !ok {
		return crawlstate.Alert{}, fmt.Errorf("crawlstate/memory: %s %q: %w", op, id, crawlstate.ErrNotFound)
	}
	return copyAlert(rec.a), nil
}

// MarkDelivered implements crawlstate.AlertOutbox; it ends the alert's
// lease.
func (s *State) MarkDelivered(ctx context.Context, id string, at time.Time) error {
	const op = "mark delivered"
	if err := check.Delivered(id, at); err != nil {
		return err
	}
	return s.updatePendingAlert(ctx, op, id, func(rec *alertRec) {
		rec.a.DeliveredAt = ut(at)
		delete(s.pending[rec.a.Source], id)
		if len(s.pending[rec.a.Source]) == 0 {
			delete(s.pending, rec.a.Source)
		}
	})
}

// MarkAlertFailed implements crawlstate.AlertOutbox; it ends the alert's
// lease.
func (s *State) MarkAlertFailed(ctx context.Context, id string, at time.Time, errMsg string) error {
	return s.updatePendingAlert(ctx, "mark alert failed", id, func(rec *alertRec) {
		rec.a.Attempts++
		rec.a.LastError = errMsg
	})
}

// updatePendingAlert runs fn on a pending alert and ends its lease; a
// delivered alert is left alone, an unknown one is ErrNotFound.
func (s *State) updatePendingAlert(ctx context.Context, op, id string, fn func(*alertRec)) error {
	if err := s.write(ctx, op); err != nil {
		return err
	}
	defer s.mu.Unlock()
	rec, ok := s.alerts[id]
	if !ok {
		return check.NoSuchAlert(op, id)
	}
	if !rec.a.DeliveredAt.IsZero() {
		return nil
	}
	fn(rec)
	rec.leaseOwner, rec.leaseExpires = "", time.Time{}
	return nil
}

// copyDocument returns d with its times in UTC.
func copyDocument(d crawlstate.Document) crawlstate.Document {
	d.NewestLastMod, d.ListedLastMod, d.FetchedAt = ut(d.NewestLastMod), ut(d.ListedLastMod), ut(d.FetchedAt)
	return d
}

// Document implements crawlstate.DocumentStore.
func (s *State) Document(ctx context.Context, source, u string) (crawlstate.Document, error) {
	const op = "document"
	if err := s.read(ctx, op); err != nil {
		return crawlstate.Document{}, err
	}
	defer s.mu.RUnlock()
	d, ok := s.docs[source][u]
	if !ok {
		return crawlstate.Document{}, fmt.Errorf("crawlstate/memory: %s %q of source %q: %w", op, u, source, crawlstate.ErrNotFound)
	}
	return d, nil
}

// PutDocument implements crawlstate.DocumentStore: it replaces every
// field of a stored document.
func (s *State) PutDocument(ctx context.Context, source string, doc crawlstate.Document) error {
	const op = "put document"
	if err := check.Document(source, doc); err != nil {
		return err
	}
	if err := s.write(ctx, op); err != nil {
		return err
	}
	defer s.mu.Unlock()
	m := s.docs[source]
	if m == nil {
		m = make(map[string]crawlstate.Document)
		s.docs[source] = m
	}
	m[doc.URL] = copyDocument(doc)
	return nil
}

// TouchListed implements crawlstate.DocumentStore.
func (s *State) TouchListed(ctx context.Context, source, via string, now time.Time) (int, error) {
	const op = "touch listed"
	if err := check.Via(via); err != nil {
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
	var since time.Time // no document: every row it listed
	if d, ok := s.docs[source][via]; ok {
		since = d.FetchedAt
	}
	now = ut(now)
	n := 0
	for p := range src.byVia[via] {
		if cmpTime(p.row.LastSeen, since) >= 0 {
			p.row.LastSeen, p.row.MissingRuns = now, 0 // no index reads them
			n++
		}
	}
	return n, nil
}

// logEvents appends checked events of source; an event without URL takes
// u.
func (s *State) logEvents(source, u string, events []crawlstate.StageEvent) {
	if len(events) == 0 {
		return
	}
	m := s.events[source]
	if m == nil {
		m = make(map[string][]crawlstate.StageEvent)
		s.events[source] = m
	}
	for _, e := range events {
		if e.URL == "" {
			e.URL = u
		}
		e.At = ut(e.At)
		m[e.URL] = append(m[e.URL], e)
	}
}

// LogEvents implements crawlstate.EventLog.
func (s *State) LogEvents(ctx context.Context, source string, events []crawlstate.StageEvent) error {
	const op = "log events"
	if err := check.Events(source, events); err != nil {
		return err
	}
	if err := s.write(ctx, op); err != nil {
		return err
	}
	defer s.mu.Unlock()
	s.logEvents(source, "", events)
	return nil
}

// Events implements crawlstate.EventLog: by time, then in logging order.
func (s *State) Events(ctx context.Context, source, u string, since time.Time) ([]crawlstate.StageEvent, error) {
	if err := s.read(ctx, "events"); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	var out []crawlstate.StageEvent
	for _, e := range s.events[source][u] {
		if cmpTime(e.At, since) >= 0 {
			out = append(out, e)
		}
	}
	slices.SortStableFunc(out, func(a, b crawlstate.StageEvent) int { return cmpTime(a.At, b.At) })
	return out, nil
}

// DeadLetters implements crawlstate.EventLog.
func (s *State) DeadLetters(ctx context.Context, source string, minFailures int) ([]crawlstate.Row, error) {
	const op = "dead letters"
	if err := check.MinFailures(minFailures); err != nil {
		return nil, err
	}
	if err := s.read(ctx, op); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	var ps []*page
	if src := s.src(source, false); src != nil {
		for _, p := range src.pages {
			if p.row.Failures >= minFailures {
				ps = append(ps, p)
			}
		}
	}
	slices.SortFunc(ps, func(a, b *page) int {
		return cmp.Or(cmp.Compare(b.row.Failures, a.row.Failures), strings.Compare(a.row.URL, b.row.URL))
	})
	return copyRows(ps, false), nil
}

// RecordRun implements crawlstate.RunLog.
func (s *State) RecordRun(ctx context.Context, source string, start time.Time) error {
	const op = "record run"
	if err := check.Run(op, source, start); err != nil {
		return err
	}
	if err := s.write(ctx, op); err != nil {
		return err
	}
	defer s.mu.Unlock()
	start = ut(start)
	runs := s.runs[source]
	i, found := slices.BinarySearchFunc(runs, start, func(a, b time.Time) int { return b.Compare(a) }) // newest first
	if found {
		return nil
	}
	runs = slices.Insert(runs, i, start)
	if len(runs) > crawlstate.KeepRuns {
		runs = runs[:crawlstate.KeepRuns]
	}
	s.runs[source] = runs
	return nil
}

// Runs implements crawlstate.RunLog.
func (s *State) Runs(ctx context.Context, source string, limit int) ([]time.Time, error) {
	if err := check.Limit("runs", limit); err != nil {
		return nil, err
	}
	if err := s.read(ctx, "runs"); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	runs := s.runs[source]
	out := make([]time.Time, min(limit, len(runs))) // none: empty, not nil
	copy(out, runs)
	return out, nil
}

// LastModTrust implements crawlstate.TrustStore.
func (s *State) LastModTrust(ctx context.Context, source string) (crawlstate.LastModCounts, error) {
	if err := check.Source("lastmod trust", source); err != nil {
		return crawlstate.LastModCounts{}, err
	}
	if err := s.read(ctx, "lastmod trust"); err != nil {
		return crawlstate.LastModCounts{}, err
	}
	defer s.mu.RUnlock()
	return s.trust[source], nil
}

// AddLastModTrust implements crawlstate.TrustStore.
func (s *State) AddLastModTrust(ctx context.Context, source string, d crawlstate.LastModCounts, keep float64) error {
	const op = "add lastmod trust"
	if err := check.Trust(source, d, keep); err != nil {
		return err
	}
	if err := s.write(ctx, op); err != nil {
		return err
	}
	defer s.mu.Unlock()
	c := s.trust[source]
	c.MovedChanged += d.MovedChanged
	c.MovedSame += d.MovedSame
	c.StillChanged += d.StillChanged
	c.StillSame += d.StillSame
	if total := c.MovedChanged + c.MovedSame + c.StillChanged + c.StillSame; keep > 0 && total > keep {
		c.MovedChanged = c.MovedChanged * keep / total
		c.MovedSame = c.MovedSame * keep / total
		c.StillChanged = c.StillChanged * keep / total
		c.StillSame = c.StillSame * keep / total
	}
	s.trust[source] = c
	return nil
}

// PlanRows implements crawlstate.PlanLister.
func (s *State) PlanRows(ctx context.Context, source, after string, limit int) ([]crawlstate.Row, error) {
	return s.liveRows(ctx, "plan rows", source, after, limit, true)
}

// LiveRows implements crawlstate.LiveLister.
func (s *State) LiveRows(ctx context.Context, source, after string, limit int) ([]crawlstate.Row, error) {
	return s.liveRows(ctx, "live rows", source, after, limit, false)
}

// liveRows returns up to limit live rows of source after the URL after,
// in URL order, whole or (plan) as PlanRows returns them.
func (s *State) liveRows(ctx context.Context, op, source, after string, limit int, plan bool) ([]crawlstate.Row, error) {
	if err := check.Limit(op, limit); err != nil {
		return nil, err
	}
	if err := s.read(ctx, op); err != nil {
		return nil, err
	}
	defer s.mu.RUnlock()
	src := s.src(source, false)
	if src == nil {
		return []crawlstate.Row{}, nil
	}
	ps := make([]*page, 0, min(backend.Prealloc(limit), src.live.Len()))
	src.live.ascend(entry{url: after}, true, func(e entry) bool {
		ps = append(ps, e.p)
		return len(ps) < limit
	})
	return copyRows(ps, plan), nil
}
