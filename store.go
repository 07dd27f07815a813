package recrawl

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
)

// store is the engine's view of Config.State: the core every store has,
// and each optional ability the engine uses, found once by type
// assertion. A method of an ability the State lacks does what its
// documentation in crawlstate says an engine does without it:
//
//   - RunLog: no run is recorded, so every run is planned as the first
//     (no previous run, no measured cadence).
//   - PageDetails: no links or chunks are read back: a crawl does not go
//     on through a page that answered 304. A pipeline (Config.Index) or
//     alerts need it; New refuses them without it.
//   - VectorCache: nothing is cached; every chunk of a changed page is
//     embedded.
//   - AlertOutbox: alerts cannot be kept until acknowledged; New refuses
//     Config.Alerts without it.
//   - DocumentStore: discovery documents are requested without
//     validators and read whole every run.
//   - EventLog: stage events are not kept; Engine.Explain and
//     Engine.DeadLetters return an error matching errors.ErrUnsupported.
//   - TrustStore: each run starts from the prior sitemap lastmod trust
//     and what it measures is not kept.
//   - Sharer: the engine runs a source alone, under the run lock.
type store struct {
	crawlstate.State
	runLog  crawlstate.RunLog
	details crawlstate.PageDetails
	vectors crawlstate.VectorCache
	outbox  crawlstate.AlertOutbox
	docs    crawlstate.DocumentStore
	events  crawlstate.EventLog
	trust   crawlstate.TrustStore
	sharer  crawlstate.Sharer
}

// newStore finds st's abilities.
func newStore(st crawlstate.State) *store {
	s := &store{State: st}
	s.runLog, _ = st.(crawlstate.RunLog)
	s.details, _ = st.(crawlstate.PageDetails)
	s.vectors, _ = st.(crawlstate.VectorCache)
	s.outbox, _ = st.(crawlstate.AlertOutbox)
	s.docs, _ = st.(crawlstate.DocumentStore)
	s.events, _ = st.(crawlstate.EventLog)
	s.trust, _ = st.(crawlstate.TrustStore)
	s.sharer, _ = st.(crawlstate.Sharer)
	return s
}

// unsupported is the error of an engine method that needs an ability the
// State lacks; it matches errors.ErrUnsupported.
func unsupported(st crawlstate.State, ability string) error {
	return fmt.Errorf("recrawl: %T has no %s: %w", st, ability, errors.ErrUnsupported)
}

// Runs is crawlstate.RunLog.Runs, or none.
func (s *store) Runs(ctx context.Context, source string, limit int) ([]time.Time, error) {
	if s.runLog == nil {
		return nil, ctx.Err()
	}
	return s.runLog.Runs(ctx, source, limit)
}

// RecordRun is crawlstate.RunLog.RecordRun, or nothing.
func (s *store) RecordRun(ctx context.Context, source string, start time.Time) error {
	if s.runLog == nil {
		return ctx.Err()
	}
	return s.runLog.RecordRun(ctx, source, start)
}

// Links is crawlstate.PageDetails.Links, or none.
func (s *store) Links(ctx context.Context, source, url string) ([]string, error) {
	if s.details == nil {
		return nil, ctx.Err()
	}
	return s.details.Links(ctx, source, url)
}

// Chunks is crawlstate.PageDetails.Chunks, or none.
func (s *store) Chunks(ctx context.Context, source, url string) ([]crawlstate.Chunk, error) {
	if s.details == nil {
		return nil, ctx.Err()
	}
	return s.details.Chunks(ctx, source, url)
}

// Vectors is crawlstate.VectorCache.Vectors, or none cached.
func (s *store) Vectors(ctx context.Context, model string, textHashes []string) (map[string][]float32, error) {
	if s.vectors == nil {
		return map[string][]float32{}, ctx.Err()
	}
	return s.vectors.Vectors(ctx, model, textHashes)
}

// PutVectors is crawlstate.VectorCache.PutVectors, or nothing.
func (s *store) PutVectors(ctx context.Context, model string, vectors map[string][]float32) error {
	if s.vectors == nil {
		return ctx.Err()
	}
	return s.vectors.PutVectors(ctx, model, vectors)
}

// PendingAlerts is crawlstate.AlertOutbox.PendingAlerts, or none.
func (s *store) PendingAlerts(ctx context.Context, source string, limit int) ([]crawlstate.Alert, error) {
	if s.outbox == nil {
		return nil, ctx.Err()
	}
	return s.outbox.PendingAlerts(ctx, source, limit)
}

// Alert is crawlstate.AlertOutbox.Alert; without an outbox no alert is
// known.
func (s *store) Alert(ctx context.Context, id string) (crawlstate.Alert, error) {
	if s.outbox == nil {
		return crawlstate.Alert{}, unsupported(s.State, "crawlstate.AlertOutbox")
	}
	return s.outbox.Alert(ctx, id)
}

// MarkDelivered is crawlstate.AlertOutbox.MarkDelivered.
func (s *store) MarkDelivered(ctx context.Context, id string, at time.Time) error {
	if s.outbox == nil {
		return unsupported(s.State, "crawlstate.AlertOutbox")
	}
	return s.outbox.MarkDelivered(ctx, id, at)
}

// MarkAlertFailed is crawlstate.AlertOutbox.MarkAlertFailed.
func (s *store) MarkAlertFailed(ctx context.Context, id string, at time.Time, errMsg string) error {
	if s.outbox == nil {
		return unsupported(s.State, "crawlstate.AlertOutbox")
	}
	return s.outbox.MarkAlertFailed(ctx, id, at, errMsg)
}

// Document is crawlstate.DocumentStore.Document; without a store no
// document is known (crawlstate.ErrNotFound).
func (s *store) Document(ctx context.Context, source, url string) (crawlstate.Document, error) {
	if s.docs == nil {
		if err := ctx.Err(); err != nil {
			return crawlstate.Document{}, err
		}
		return crawlstate.Document{}, crawlstate.ErrNotFound
	}
	return s.docs.Document(ctx, source, url)
}

// PutDocument is crawlstate.DocumentStore.PutDocument, or nothing.
func (s *store) PutDocument(ctx context.Context, source string, doc crawlstate.Document) error {
	if s.docs == nil {
		return ctx.Err()
	}
	return s.docs.PutDocument(ctx, source, doc)
}

// TouchListed is crawlstate.DocumentStore.TouchListed; without a store no
// document answers 304 (none is requested with validators), so there is
// nothing to touch.
func (s *store) TouchListed(ctx context.Context, source, via string, now time.Time) (int, error) {
	if s.docs == nil {
		return 0, ctx.Err()
	}
	return s.docs.TouchListed(ctx, source, via, now)
}

// LogEvents is crawlstate.EventLog.LogEvents, or nothing.
func (s *store) LogEvents(ctx context.Context, source string, events []crawlstate.StageEvent) error {
	if s.events == nil {
		return ctx.Err()
	}
	return s.events.LogEvents(ctx, source, events)
}

// Events is crawlstate.EventLog.Events.
func (s *store) Events(ctx context.Context, source, url string, since time.Time) ([]crawlstate.StageEvent, error) {
	if s.events == nil {
		return nil, unsupported(s.State, "crawlstate.EventLog")
	}
	return s.events.Events(ctx, source, url, since)
}

// DeadLetters is crawlstate.EventLog.DeadLetters.
func (s *store) DeadLetters(ctx context.Context, source string, minFailures int) ([]crawlstate.Row, error) {
	if s.events == nil {
		return nil, unsupported(s.State, "crawlstate.EventLog")
	}
	return s.events.DeadLetters(ctx, source, minFailures)
}

// LastModTrust is crawlstate.TrustStore.LastModTrust, or zero counts (the
// prior).
func (s *store) LastModTrust(ctx context.Context, source string) (crawlstate.LastModCounts, error) {
	if s.trust == nil {
		return crawlstate.LastModCounts{}, ctx.Err()
	}
	return s.trust.LastModTrust(ctx, source)
}

// AddLastModTrust is crawlstate.TrustStore.AddLastModTrust, or nothing.
func (s *store) AddLastModTrust(ctx context.Context, source string, delta crawlstate.LastModCounts, keep float64) error {
	if s.trust == nil {
		return ctx.Err()
	}
	return s.trust.AddLastModTrust(ctx, source, delta, keep)
}
