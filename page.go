package recrawl

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/extract"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/normalize"
	"github.com/recrawl/recrawl/schedule"
)

// process fetches one row of the due queue. An answer with a body goes to
// the extraction stage (bodies); any other outcome is recorded here.
func (r *run) process(ctx context.Context, row crawlstate.Row, bodies chan<- fetched) {
	if r.halt.halted() {
		r.skipDue(row, r.halt.reason())
		return
	}
	if !r.admitRow(ctx, row) {
		return
	}
	t := &ticket{b: &r.budget}
	t.prepaid.Store(true) // admitRow reserved the first request
	req := fetch.Request{URL: row.OriginalURL}
	if !row.Gone {
		req.ETag, req.LastModified = row.ETag, row.LastModified
	}
	r.stage(StageFetch, 0)
	resp, err := r.e.fetcher.Fetch(context.WithValue(ctx, ticketKey{}, t), req)
	r.countRequests(t, resp, err)
	if err == nil && !resp.NotModified() && !resp.Gone() {
		// Queued even when ctx ends: extraction records what was fetched.
		bodies <- fetched{row: row, resp: resp}
		return
	}
	r.handle(ctx, row, resp, err, false)
	r.lock.refreshIfDue(ctx)
}

// admitRow applies a shared run's lease, robots.txt and the page cap
// before a row is requested.
// It returns false when the row must not be requested; the outcome (a
// robots skip, or a failure to read robots.txt) is already counted, and a
// cap stops the run.
func (r *run) admitRow(ctx context.Context, row crawlstate.Row) bool {
	e := r.e
	if !r.share.holds(ctx, row.URL) {
		r.skipDue(row, SkipLeaseLost) // another engine took the row over
		return false
	}
	if e.limits.RespectRobots {
		allowed, err := e.polite.Allowed(ctx, row.OriginalURL)
		if err != nil {
			if ctx.Err() == nil {
				r.stage(StageFetch, 0)
				r.stage(StageFetch, -1)
				r.fail(ctx, row, StageFetch, 0, err)
			}
			return false
		}
		if !allowed {
			r.skipDue(row, SkipRobots)
			return false
		}
	}
	if !r.budget.take() {
		r.halt.stop(StopMaxPages)
		r.skipDue(row, r.halt.reason())
		return false
	}
	return true
}

// handle turns a fetch result into the row's outcome: it extracts,
// fingerprints, runs the index pipeline, commits and alerts. For a crawled
// page (crawl set) it stores the page's outgoing links and returns them
// (from the body of a 200, the stored ones for a 304), so the crawl can go
// on; other sources neither store nor read links.
func (r *run) handle(ctx context.Context, row crawlstate.Row, resp *fetch.Response, ferr error, crawl bool) []string {
	e := r.e
	if ferr != nil {
		r.stage(StageFetch, -1)
		var se *fetch.StatusError
		if errors.As(ferr, &se) && se.Billed > 0 {
			r.tally.add(func(rep *Report) {
				rep.Billed += se.Billed
			})
		}
		switch {
		case ctx.Err() != nil:
			// Interrupted: the row stays due, nothing to record.
		case errors.Is(ferr, fetch.ErrCapReached):
			r.halt.stop(StopMaxPages) // a retry, redirect or crawl request met the cap: the row stays due
			r.skipDue(row, SkipMaxPages)
		case errors.Is(ferr, fetch.ErrOffHostRedirect):
			r.skipDue(row, SkipOffHostRedirect)
		case errors.Is(ferr, fetch.ErrDenied):
			r.skipDue(row, SkipRobots) // a redirect led to a disallowed URL, or a crawl link is disallowed
		case fatalError(ferr):
			r.halt.fail(ferr)
			r.skipDue(row, SkipError) // not the page's fault: the row stays as it was
		default:
			r.fail(ctx, row, StageFetch, 0, ferr)
		}
		return nil
	}
	if !e.cfg.FollowOffHostRedirects && offSite(resp) {
		// A fetcher that followed a redirect to another host: its answer
		// is not the listed page's.
		r.stage(StageFetch, -1)
		r.skipDue(row, SkipOffHostRedirect)
		return nil
	}
	r.stage(StageFetch, 1)
	r.tally.add(func(rep *Report) {
		rep.Billed += resp.Billed
	})
	if !r.share.holds(ctx, row.URL) {
		// Another engine took the row over while this one waited for
		// the answer: it indexes and records the row, not this one.
		r.skipDue(row, SkipLeaseLost)
		return nil
	}
	p := &pageRun{r: r, row: row, resp: resp, now: e.cfg.Clock.Now(), crawl: crawl}
	p.event(StageFetch, true, "", httpDetail(resp.Status))
	switch {
	case resp.Gone():
		p.gone(ctx)
		return nil
	case resp.NotModified():
		p.notModified(ctx)
		if !crawl {
			return nil
		}
		links, err := e.st.Links(ctx, r.source, row.URL)
		if err != nil && ctx.Err() == nil {
			// The page is recorded; the crawl cannot go on from it.
			r.log.WarnContext(ctx, "reading stored links failed; the crawl does not follow them", "url", row.URL, "err", err)
			r.halt.fail(fmt.Errorf("recrawl: reading the links of %s: %w", row.URL, err))
		}
		return links
	default:
		return p.body(ctx)
	}
}

// httpDetail is a fetch event's detail: "HTTP " and the status, without an
// allocation for the usual ones.
func httpDetail(status int) string {
	switch status {
	case http.StatusOK:
		return "HTTP 200"
	case http.StatusNotModified:
		return "HTTP 304"
	}
	return "HTTP " + strconv.Itoa(status)
}

// offSite reports whether a response came, after redirects, from another
// site than the URL requested.
func offSite(resp *fetch.Response) bool {
	return resp.FinalURL != "" && resp.URL != "" && resp.FinalURL != resp.URL && !normalize.SameSite(resp.URL, resp.FinalURL)
}

// pageRun is one page on its way through the pipeline.
type pageRun struct {
	r        *run
	row      crawlstate.Row
	resp     *fetch.Response
	now      time.Time
	events   []crawlstate.StageEvent
	markdown string // the extracted content, for OnContent
	crawl    bool   // a crawl's page: its links are stored for the next run
}

func (p *pageRun) event(stage string, ok bool, errMsg, detail string) {
	p.events = append(p.events, crawlstate.StageEvent{URL: p.row.URL, At: p.r.e.cfg.Clock.Now(), Stage: stage, Attempt: p.attempts(stage) + 1, OK: ok, Err: errMsg, Detail: detail})
}

// attempts counts the page's events of stage so far.
func (p *pageRun) attempts(stage string) int {
	n := 0
	for _, ev := range p.events {
		if ev.Stage == stage {
			n++
		}
	}
	return n
}

// logEvents stores the page's stage events, for Explain.
func (p *pageRun) logEvents(ctx context.Context) {
	if len(p.events) == 0 {
		return
	}
	if err := p.r.e.st.LogEvents(context.WithoutCancel(ctx), p.r.source, p.events); err != nil {
		p.r.log.WarnContext(ctx, "logging stage events failed", "url", p.row.URL, "err", err)
		p.r.tally.add(func(rep *Report) { rep.StateWriteFailures.Events++ })
	}
	p.events = nil
}

// fail counts a failed stage and records it: the row keeps its hash,
// validators and schedule, so it stays due.
func (p *pageRun) fail(ctx context.Context, stage string, cause error) {
	p.event(stage, false, cause.Error(), "")
	p.logEvents(ctx)
	p.r.stage(stage, -1)
	p.r.fail(ctx, p.row, stage, p.resp.Status, cause)
}

// schedule computes the next check and the updated statistics through
// the run's chain.
func (p *pageRun) schedule(res *crawlstate.Result, obs schedule.Observation) {
	d := p.r.reschedule(p.row, schedule.Outcome{At: p.now, Kind: schedule.Fetched, Observation: obs})
	if !obs.First {
		p.r.trust.count(p.row, obs.Changed)
	}
	res.Interval = d.Page.Interval
	stats := statsOf(d.Page)
	res.Stats = &stats
	res.NextCheck = d.Next
}

func (p *pageRun) gone(ctx context.Context) {
	r := p.r
	res := crawlstate.Result{URL: p.row.URL, At: p.now, Gone: true}
	// A tombstone leaves the due queue: the chain is told, and the state
	// ignores a gone result's schedule.
	r.reschedule(p.row, schedule.Outcome{At: p.now, Kind: schedule.Gone})
	if r.e.cfg.Index != nil {
		if !p.deleteRecords(ctx) {
			return
		}
	}
	var a *alert.Alert
	if r.e.cfg.Alerts != nil && p.row.ContentHash != "" {
		a = p.newAlert(alert.Removed, p.row.ContentHash, "")
		old, err := r.e.st.Chunks(ctx, r.source, p.row.URL)
		if err != nil {
			p.fail(ctx, StageAlert, fmt.Errorf("reading the removed page's chunks: %w", err))
			return
		}
		for _, c := range old {
			a.Removed = append(a.Removed, alert.ChunkChange{Ordinal: c.Ordinal, HeadingPath: c.HeadingPath, Start: c.Start, End: c.End, OldText: c.Text, OldRecordID: c.RecordID})
		}
	}
	p.commit(ctx, &res, OutcomeGone, a)
}

func (p *pageRun) notModified(ctx context.Context) {
	res := crawlstate.Result{URL: p.row.URL, At: p.now, NotModified: true, ETag: p.resp.ETag, LastModified: p.resp.LastModified}
	lm := p.resp.LastModified
	if lm == "" {
		lm = p.row.LastModified
	}
	p.schedule(&res, schedule.Observation{At: p.now, LastModified: httpTime(lm)})
	p.commit(ctx, &res, OutcomeUnchanged, nil)
}

// body handles an answer with content.
func (p *pageRun) body(ctx context.Context) []string {
	r, e := p.r, p.r.e
	if !isDocument(p.resp.ContentType, p.resp.Body, p.crawl) {
		p.notDocument(ctx)
		return nil
	}
	r.stage(StageExtract, 0)
	doc, err := pageContent(p.resp, int(e.limits.MaxBytes))
	if err != nil {
		p.fail(ctx, StageExtract, err)
		return doc.Links // a rejected page's links still lead somewhere
	}
	r.stage(StageExtract, 1)
	p.event(StageExtract, true, "", strconv.Itoa(len(doc.Markdown))+" bytes of Markdown")

	res := crawlstate.Result{
		URL: p.row.URL, At: p.now, ETag: p.resp.ETag, LastModified: p.resp.LastModified,
		Title: doc.Title, Canonical: doc.Canonical,
	}
	if p.crawl {
		res.Links = nonNil(doc.Links) // a 304 next run continues the crawl from them
	}
	if alias := p.aliasOf(doc.Canonical); alias != "" {
		p.alias(ctx, &res, alias)
		return doc.Links
	}
	hash := e.cfg.Fingerprint.For(p.row.URL).Of(doc.Markdown)
	res.ContentHash = hash
	obs := schedule.Observation{At: p.now, LastModified: httpTime(p.resp.LastModified)}
	outcome := OutcomeUnchanged
	switch {
	case p.row.ContentHash == "":
		// The first fetch has nothing to compare with: a visit, not a
		// change (Row.Changes counts the fetches that found one).
		outcome, obs.First, obs.Changed = OutcomeNew, true, true
	case hash != p.row.ContentHash:
		outcome, obs.Changed, res.Changed = OutcomeChanged, true, true
	}
	p.schedule(&res, obs)

	var a *alert.Alert
	if e.pipeline() && (outcome != OutcomeUnchanged || p.missingChunks(ctx)) {
		chunks, changes, ok := p.index(ctx, doc.Markdown, hash, doc.Title)
		if !ok {
			return doc.Links
		}
		res.Chunks, res.ReplaceChunks = chunks, true
		if e.cfg.Alerts != nil && (outcome == OutcomeChanged || (outcome == OutcomeNew && e.cfg.AlertOnNew)) {
			a = p.changeAlert(outcome, hash, doc.Title, changes, chunks)
		}
	}
	p.markdown = doc.Markdown
	p.commit(ctx, &res, outcome, a)
	return doc.Links
}

// notDocument records an answer that is not a page: the row is excluded
// from the due queue, so the URL is not requested again.
func (p *pageRun) notDocument(ctx context.Context) {
	r := p.r
	r.stage(StageCommit, 0)
	res := crawlstate.Result{URL: p.row.URL, At: p.now, Excluded: SkipNotDocument, Lease: r.share.leaseOf(p.row.URL)}
	if err := r.e.st.Record(ctx, r.source, []crawlstate.Result{res}); err != nil {
		if ctx.Err() == nil && !r.leaseLost(ctx, p.row, err) {
			p.fail(ctx, StageCommit, err)
		}
		return
	}
	r.stage(StageCommit, 1)
	p.event(StageCommit, true, "", "not a document ("+p.resp.ContentType+"): excluded")
	p.logEvents(ctx)
	r.skipDue(p.row, SkipNotDocument)
}

// aliasOf returns the normalized canonical URL a page declares when the
// Follow policy makes the page its alias: same host, another URL.
func (p *pageRun) aliasOf(canonical string) string {
	e := p.r.e
	if e.cfg.CanonicalPolicy != CanonicalFollow || canonical == "" {
		return ""
	}
	c, err := e.cfg.Normalize.URL(canonical)
	if err != nil || c == p.row.URL {
		return ""
	}
	cu, err1 := url.Parse(c)
	ru, err2 := url.Parse(p.row.URL)
	if err1 != nil || err2 != nil || !strings.EqualFold(cu.Host, ru.Host) {
		return ""
	}
	return c
}

// alias records the page as an alias of its canonical and makes the
// canonical discovered (due now, fetched as its own row, by a later run).
func (p *pageRun) alias(ctx context.Context, res *crawlstate.Result, canonical string) {
	r := p.r
	st := r.e.st
	if _, err := st.UpsertDiscovered(ctx, r.source, r.start, []crawlstate.Discovered{{URL: canonical, OriginalURL: p.resp.FinalURL}}); err != nil {
		p.fail(ctx, StageCommit, err)
		return
	}
	res.AliasOf = canonical
	res.ContentHash = p.row.ContentHash // the alias carries no content of its own
	if r.e.cfg.Index != nil && p.row.ContentHash != "" {
		if !p.deleteRecords(ctx) {
			return
		}
		res.Chunks, res.ReplaceChunks = nil, true
	}
	p.schedule(res, schedule.Observation{At: p.now})
	r.stage(StageCommit, 0)
	res.Events = append(p.events[:len(p.events):len(p.events)],
		crawlstate.StageEvent{URL: p.row.URL, At: r.e.cfg.Clock.Now(), Stage: StageCommit, Attempt: p.attempts(StageCommit) + 1, OK: true, Detail: "alias of " + canonical})
	res.Lease = r.share.leaseOf(p.row.URL)
	if err := r.commits.commit(*res); err != nil {
		if ctx.Err() == nil && !r.leaseLost(ctx, p.row, err) {
			p.fail(ctx, StageCommit, err)
		}
		return
	}
	r.stage(StageCommit, 1)
	p.events = nil // stored with the result
	r.tally.add(func(rep *Report) {
		rep.Aliases++
	})
	r.skipDue(p.row, SkipAlias)
}

// commit records the result (with its alert, in the same transaction) and
// then delivers the alert.
func (p *pageRun) commit(ctx context.Context, res *crawlstate.Result, outcome Outcome, a *alert.Alert) {
	r := p.r
	if a != nil {
		stored, err := storedAlert(r.source, a, p.row)
		if err != nil {
			p.fail(ctx, StageAlert, err)
			return
		}
		res.Alert = &stored
	}
	if on := r.e.cfg.OnContent; on != nil && (outcome == OutcomeGone || !res.NotModified) {
		c := Content{
			Source: r.source, URL: p.row.URL, OriginalURL: p.row.OriginalURL, Outcome: outcome,
			Title: res.Title, Canonical: res.Canonical, Markdown: p.markdown,
			OldHash: p.row.ContentHash, Hash: res.ContentHash, At: p.now,
		}
		if outcome != OutcomeGone {
			c.FinalURL, c.ContentType = p.resp.FinalURL, p.resp.ContentType
		} else {
			c.Title, c.Hash = p.row.Title, ""
		}
		if !p.retry(ctx, StageContent, string(outcome), func() error { return on(ctx, c) }) {
			return
		}
	}
	r.stage(StageCommit, 0)
	// The page's stage events, its commit included, go in the result's
	// transaction; a failed commit logs them with its failure instead. A
	// 304 stores its fetch event alone: written in the row's transaction,
	// it records the commit as well (one event row per 304, not two).
	if res.NotModified {
		res.Events = p.events[:len(p.events):len(p.events)]
	} else {
		res.Events = append(p.events[:len(p.events):len(p.events)],
			crawlstate.StageEvent{URL: p.row.URL, At: r.e.cfg.Clock.Now(), Stage: StageCommit, Attempt: p.attempts(StageCommit) + 1, OK: true, Detail: "hash " + short(res.ContentHash)})
	}
	res.Lease = r.share.leaseOf(p.row.URL)
	committed := func(err error) bool {
		if err != nil {
			if ctx.Err() == nil && !r.leaseLost(ctx, p.row, err) {
				p.fail(ctx, StageCommit, err)
			} // else interrupted (the row stays as it was, due) or another engine's
			return false
		}
		r.stage(StageCommit, 1)
		p.events = nil // stored with the result
		return true
	}
	finish := func() {
		r.finishURL(Event{URL: p.row.URL, Outcome: outcome, Status: p.resp.Status, At: p.now}, p.resp)
	}
	if a == nil && !p.crawl {
		// Nothing waits for this commit: the worker goes on with the next
		// page, and the outcome is counted once the batch is written.
		r.commits.submit(*res, func(err error) {
			if committed(err) {
				finish()
			}
		})
		return
	}
	if !committed(r.commits.commit(*res)) {
		return
	}
	if a != nil {
		r.alerts.deliver(ctx, p, *a)
	}
	p.logEvents(ctx)
	finish()
}

// fail records a failed stage: the row keeps its hash, validators and
// interval, and is backed off (see backoff): it is not due again before
// its retry time.
func (r *run) fail(ctx context.Context, row crawlstate.Row, stage string, status int, cause error) {
	e := r.e
	now := e.cfg.Clock.Now()
	d := r.reschedule(row, schedule.Outcome{At: now, Kind: schedule.Failed, Failures: row.Failures, Permanent: Permanent(cause)})
	r.log.DebugContext(ctx, "page failed", "url", row.URL, "stage", stage, "err", cause, "retry_in", d.Next.Sub(now))
	f := crawlstate.Failure{URL: row.URL, At: now, Stage: stage, Err: cause.Error(), RetryAt: d.Next, Lease: r.share.leaseOf(row.URL)}
	err := e.st.RecordFailure(context.WithoutCancel(ctx), r.source, f)
	if r.leaseLost(ctx, row, err) {
		return
	}
	if err != nil {
		// The row keeps its NextCheck: it is retried at the next run.
		r.log.WarnContext(ctx, "recording a failure failed", "url", row.URL, "err", err)
		r.tally.add(func(rep *Report) { rep.StateWriteFailures.Failures++ })
	} else {
		r.tally.add(func(rep *Report) {
			rep.RetriesDeferred++
		})
	}
	r.finishURL(Event{URL: row.URL, Outcome: OutcomeFailed, Stage: stage, Status: status, Err: cause, At: now}, nil)
}

// leaseLost reports whether err, the error of a fenced write of row, says
// that another engine took the row over; if so the row is counted skipped
// (SkipLeaseLost) and its lease marked lost.
func (r *run) leaseLost(ctx context.Context, row crawlstate.Row, err error) bool {
	if !errors.Is(err, crawlstate.ErrLeaseLost) {
		return false
	}
	r.share.lose(row.URL)
	r.log.WarnContext(ctx, "another engine took over a claimed row before its outcome was recorded; leaving it", "url", row.URL)
	r.skipDue(row, SkipLeaseLost)
	return true
}

// FailureBackoff is the wait after a page's first transient failure; each
// further consecutive failure doubles it, up to the scheduler's longest
// interval (schedule.MaxIntervalOf); a permanent failure (Permanent) waits
// that longest interval at once (schedule.Backoff, in the run's chain).
const FailureBackoff = schedule.DefaultFailureBackoff

// Permanent reports whether a page failure will not go away by retrying
// soon: a script-rendered or empty page, a body that is not a document, a
// body over the size cap, a 401 or 403. Such pages are retried after the
// scheduler's longest interval.
func Permanent(err error) bool {
	var se *fetch.StatusError
	if errors.As(err, &se) && (se.Status == http.StatusUnauthorized || se.Status == http.StatusForbidden) {
		return true
	}
	for _, p := range []error{extract.ErrScriptRendered, extract.ErrEmpty, extract.ErrTooManyElements, ErrUnsupportedType, fetch.ErrTooLarge} {
		if errors.Is(err, p) {
			return true
		}
	}
	return false
}

// countRequests counts the requests of one fetch that did not go through
// the engine's transport (which counts its own in budget.sent): a Fetcher
// that talks to a remote API reports them as attempts.
func (r *run) countRequests(t *ticket, resp *fetch.Response, err error) {
	if t != nil && t.routed.Load() {
		return
	}
	n := 0
	var se *fetch.StatusError
	switch {
	case resp != nil:
		n = max(resp.Attempts, 1)
	case errors.As(err, &se):
		n = max(se.Attempts, 1)
	case err != nil && !errors.Is(err, fetch.ErrDenied) && !errors.Is(err, fetch.ErrCapReached):
		n = 1
	}
	r.direct.Add(int64(n))
}

// skipDue counts a due URL that was not requested or whose content was not
// used (robots.txt denies it, it is an alias); the row is left as it was.
func (r *run) skipDue(row crawlstate.Row, reason string) {
	at := r.e.cfg.Clock.Now()
	r.share.skipped(row.URL, reason)
	r.outcome(func() Event {
		return r.tally.end(Event{URL: row.URL, Outcome: OutcomeSkipped, Reason: reason, At: at}, func(rep *Report) { rep.Skipped[reason]++ })
	})
}

// finishURL counts a due URL's outcome and tells the observer.
func (r *run) finishURL(ev Event, resp *fetch.Response) {
	r.outcome(func() Event { return r.countOutcome(ev, resp) })
}

func (r *run) countOutcome(ev Event, resp *fetch.Response) Event {
	return r.tally.end(ev, func(rep *Report) {
		rep.Fetched++
		if resp != nil {
			switch {
			case resp.NotModified():
				rep.NotModified++
			case !resp.Gone():
				rep.Bodies++
			}
		}
		switch ev.Outcome {
		case OutcomeNew:
			rep.New++
		case OutcomeChanged:
			rep.Changed++
		case OutcomeUnchanged:
			rep.Unchanged++
		case OutcomeGone:
			rep.Gone++
		case OutcomeFailed:
			rep.Failed[ev.Stage]++
		}
	})
}

// pageOf is the scheduler's view of a row.
func pageOf(row crawlstate.Row) schedule.Page {
	p := schedule.Page{
		Interval: row.Interval, LastFetched: row.LastFetched, Visits: row.Visits, Changes: row.Changes,
		LastChanged: row.Stats.LastChanged, Elapsed: row.Stats.Elapsed, LastModified: row.Stats.LastModified,
		ChangeRate: schedule.Rate(row.Stats.ChangeRate), Weight: row.Stats.Weight,
	}
	if len(row.Stats.Recent) > 0 {
		p.Recent = make([]schedule.Check, len(row.Stats.Recent))
		for i, c := range row.Stats.Recent {
			p.Recent[i] = schedule.Check{Elapsed: c.Elapsed, Changed: c.Changed, Modified: c.Modified, CoChance: c.CoChance}
		}
	}
	return p
}

// statsOf is what the state stores of the scheduler's statistics.
func statsOf(p schedule.Page) crawlstate.Stats {
	s := crawlstate.Stats{
		LastChanged: p.LastChanged, Elapsed: p.Elapsed, LastModified: p.LastModified,
		ChangeRate: float64(p.ChangeRate), Weight: p.Weight,
	}
	if len(p.Recent) > 0 {
		s.Recent = make([]crawlstate.Check, len(p.Recent))
		for i, c := range p.Recent {
			s.Recent[i] = crawlstate.Check{Elapsed: c.Elapsed, Changed: c.Changed, Modified: c.Modified, CoChance: crawlstate.RoundCoChance(c.CoChance)}
		}
	}
	return s
}

// httpTime parses an HTTP date; zero when absent or malformed.
func httpTime(v string) time.Time {
	if v == "" {
		return time.Time{}
	}
	t, err := http.ParseTime(v)
	if err != nil {
		return time.Time{}
	}
	return t
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// errEmptyChunks is the extract-stage failure of a page whose Markdown
// yields no chunk.
var errEmptyChunks = extract.ErrEmpty
