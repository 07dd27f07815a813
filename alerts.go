package recrawl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/internal/retry"
)

// Alert is a page-change alert: the canonical page, both content hashes,
// the changed chunks with their text, a unified diff and the index records
// written. Its ID is alert.ID(URL, OldHash, NewHash).
type Alert = alert.Alert

// ChunkChange is one chunk of an Alert that was added, removed or changed.
type ChunkChange = alert.ChunkChange

// envelope is how an alert is stored: the alert plus what Explain needs.
type envelope struct {
	Alert Alert `json:"alert"`
	// Since is when the previous version was stored: Explain lists the
	// page's stage events from then on.
	Since time.Time `json:"since"`
}

func (p *pageRun) newAlert(kind alert.Kind, oldHash, newHash string) *Alert {
	a := &Alert{
		ID: alert.ID(p.row.URL, oldHash, newHash), Kind: kind, Source: p.r.source,
		URL: p.row.URL, OldHash: oldHash, NewHash: newHash, DetectedAt: p.now, Title: p.row.Title,
	}
	if p.row.OriginalURL != p.row.URL {
		a.OriginalURL = p.row.OriginalURL
	}
	return a
}

// changeAlert builds the alert of a new or changed page from its chunk
// diff.
func (p *pageRun) changeAlert(outcome Outcome, hash, title string, d chunkDiff, chunks []crawlstate.Chunk) *Alert {
	kind := alert.Changed
	old := p.row.ContentHash
	if outcome == OutcomeNew {
		kind, old = alert.New, ""
	}
	a := p.newAlert(kind, old, hash)
	if title != "" {
		a.Title = title
	}
	a.Added, a.Removed, a.Changed = d.added, d.removed, d.changed
	if kind == alert.Changed {
		a.Diff = alert.UnifiedDiff("old/"+p.row.URL, "new/"+p.row.URL, d.oldText, d.newText, 3)
	}
	for _, c := range chunks {
		if c.RecordID != "" {
			a.RecordIDs = append(a.RecordIDs, c.RecordID)
		}
	}
	return a
}

// storedAlert is the state's record of an alert, pending delivery.
func storedAlert(source string, a *Alert, row crawlstate.Row) (crawlstate.Alert, error) {
	since := row.Stats.LastChanged
	if since.IsZero() {
		since = row.FirstSeen
	}
	payload, err := json.Marshal(envelope{Alert: *a, Since: since})
	if err != nil {
		return crawlstate.Alert{}, fmt.Errorf("encoding alert %s: %w", a.ID, err)
	}
	return crawlstate.Alert{ID: a.ID, Source: source, URL: a.URL, Kind: string(a.Kind), CreatedAt: a.DetectedAt, Payload: payload}, nil
}

// alerter delivers a run's alerts to the sink: each new one once its
// commit stored it, and at the start of a run those earlier runs left
// pending. Its methods are safe for the run's goroutines.
type alerter struct {
	sink     alert.Sink
	st       *store
	source   string
	attempts int // Config.StageAttempts
	clk      clock.Clock
	log      *slog.Logger
	tally    *tally
	share    *shared // nil when the State is not shared
}

func newAlerter(r *run) *alerter {
	e := r.e
	return &alerter{sink: e.cfg.Alerts, st: e.st, source: r.source, attempts: e.cfg.StageAttempts,
		clk: e.cfg.Clock, log: r.log, tally: r.tally, share: r.share}
}

// deliver hands a committed alert to the sink, retrying up to
// StageAttempts times (waiting retry.Exp: one second, then two, ...),
// and records the acknowledgement. An alert that is not acknowledged
// stays pending and is delivered again, with the same ID, at the start of
// the next run. When p is not nil the attempts are p's stage events.
//
// On a shared State the run first leases the alert (Sharer.ClaimAlert):
// when another engine holds it or delivered it, this run leaves it to
// that engine.
func (d *alerter) deliver(ctx context.Context, p *pageRun, a Alert) {
	if !d.share.claimAlert(ctx, a.ID) {
		return
	}
	var err error
	for attempt := 1; attempt <= d.attempts; attempt++ {
		d.tally.stage(StageAlert, 0)
		if err = d.sink.Deliver(ctx, a); err == nil {
			break
		}
		d.tally.stage(StageAlert, -1)
		if p != nil {
			p.event(StageAlert, false, err.Error(), a.ID)
		}
		if ctx.Err() != nil || attempt == d.attempts {
			break
		}
		if clock.Sleep(ctx, d.clk, retry.Exp(attempt-1, time.Second, 30*time.Second)) != nil {
			break
		}
	}
	now := d.clk.Now()
	if err != nil {
		d.tally.add(func(rep *Report) {
			rep.AlertsPending++
		})
		if merr := d.st.MarkAlertFailed(context.WithoutCancel(ctx), a.ID, now, err.Error()); merr != nil {
			d.log.WarnContext(ctx, "recording an alert failure failed", "alert", a.ID, "err", merr)
			d.tally.add(func(rep *Report) { rep.StateWriteFailures.Alerts++ })
		}
		d.log.WarnContext(ctx, "alert not delivered; it stays pending", "alert", a.ID, "url", a.URL, "err", err)
		return
	}
	d.tally.stage(StageAlert, 1)
	if p != nil {
		p.event(StageAlert, true, "", a.ID)
	}
	if merr := d.st.MarkDelivered(context.WithoutCancel(ctx), a.ID, now); merr != nil {
		// The sink has it; at worst it is sent again with the same ID.
		d.log.WarnContext(ctx, "recording an alert delivery failed", "alert", a.ID, "err", merr)
		d.tally.add(func(rep *Report) { rep.StateWriteFailures.Alerts++ })
		return
	}
	d.tally.add(func(rep *Report) {
		rep.AlertsDelivered++
	})
}

// deliverPending delivers the source's alerts that an earlier run stored
// but did not get acknowledged (a crash, a failing sink).
func (d *alerter) deliverPending(ctx context.Context) error {
	if d.sink == nil {
		return nil
	}
	for {
		pending, err := d.st.PendingAlerts(ctx, d.source, 100)
		if err != nil {
			return fmt.Errorf("recrawl: reading pending alerts: %w", err)
		}
		progress := false
		for _, sa := range pending {
			var env envelope
			if err := json.Unmarshal(sa.Payload, &env); err != nil {
				d.log.WarnContext(ctx, "stored alert unreadable; skipped", "alert", sa.ID, "err", err)
				continue
			}
			delivered := func(rep *Report) int { return rep.AlertsDelivered }
			before := read(d.tally, delivered)
			d.deliver(ctx, nil, env.Alert)
			if read(d.tally, delivered) > before {
				progress = true
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
		}
		if len(pending) < 100 || !progress {
			return nil
		}
	}
}

// Explanation is the evidence behind one alert: what a person needs to
// check it.
type Explanation struct {
	// Alert is the alert as delivered.
	Alert Alert
	// Delivered is when the sink acknowledged it (zero while pending).
	Delivered time.Time
	// Page is the page's state now.
	Page crawlstate.Row
	// Chunks is the page's current chunk list (the version the alert
	// announced, unless the page changed again since).
	Chunks []crawlstate.Chunk
	// Events lists every stage attempt and failure for the page since the
	// previous version was stored, oldest first.
	Events []crawlstate.StageEvent
	// RecordIDs are the exact index records written for the new version.
	RecordIDs []string
}

// ErrUnknownAlert is returned by Explain for an alert ID the state does not
// hold.
var ErrUnknownAlert = errors.New("recrawl: unknown alert")

// Explain returns the evidence behind an alert: the canonical page, both
// content hashes, the changed chunks, every stage attempt and failure for
// the page since the previous version, and the record IDs written.
func (e *Engine) Explain(ctx context.Context, alertID string) (*Explanation, error) {
	st := e.st
	sa, err := st.Alert(ctx, alertID)
	if errors.Is(err, crawlstate.ErrNotFound) {
		return nil, fmt.Errorf("%w %q", ErrUnknownAlert, alertID)
	}
	if err != nil {
		return nil, fmt.Errorf("recrawl: explain %s: %w", alertID, err)
	}
	var env envelope
	if err := json.Unmarshal(sa.Payload, &env); err != nil {
		return nil, fmt.Errorf("recrawl: explain %s: stored alert unreadable: %w", alertID, err)
	}
	x := &Explanation{Alert: env.Alert, Delivered: sa.DeliveredAt, RecordIDs: env.Alert.RecordIDs}
	if x.Page, err = st.Get(ctx, sa.Source, sa.URL); err != nil {
		return nil, fmt.Errorf("recrawl: explain %s: %w", alertID, err)
	}
	if x.Chunks, err = st.Chunks(ctx, sa.Source, sa.URL); err != nil {
		return nil, fmt.Errorf("recrawl: explain %s: %w", alertID, err)
	}
	if x.Events, err = st.Events(ctx, sa.Source, sa.URL, env.Since); err != nil {
		return nil, fmt.Errorf("recrawl: explain %s: %w", alertID, err)
	}
	return x, nil
}

// DeadLetter is a page that failed DeadLetterAfter runs in a row. It is
// retried after its backoff, like every failing page: the backoff doubles
// with each failure up to the scheduler's longest interval.
type DeadLetter struct {
	Source    string
	URL       string
	Stage     string // the stage of the last failure
	Attempts  int    // consecutive failed runs
	LastError string
	At        time.Time // the last failure
}

// DeadLetters lists the pages of source that keep failing, most failures
// first.
func (e *Engine) DeadLetters(ctx context.Context, source string) ([]DeadLetter, error) {
	rows, err := e.st.DeadLetters(ctx, source, e.cfg.DeadLetterAfter)
	if err != nil {
		return nil, fmt.Errorf("recrawl: dead letters of %s: %w", source, err)
	}
	out := make([]DeadLetter, len(rows))
	for i, r := range rows {
		out[i] = DeadLetter{Source: r.Source, URL: r.URL, Stage: r.LastStage, Attempts: r.Failures, LastError: r.LastError, At: r.LastFailure}
	}
	return out, nil
}
