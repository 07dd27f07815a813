package geonode

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/fetch"
)

// FetchBatch implements fetch.BatchFetcher with POST /v1/batch.
//
// reqs are sent as jobs of at most the batch size (1,000 by default) one
// after another. A job carries one headers object for all its URLs, so the
// requests' ETag and LastModified are ignored: rows with validators belong
// on the single-page path (Fetch). Each job is polled with a growing
// interval; every poll reads the status page 1 and, when the counters moved,
// every result page (page_size at most 50) until total_urls are accounted
// for. Results map back to their index in reqs by input_index (by URL when
// input_index is absent or disagrees), and each index is yielded exactly
// once, as soon as its item is final:
//   - a completed item as a *fetch.Response (origin 304/404/410 included) or
//     a *fetch.StatusError for another origin status;
//   - a failed item as an *ItemError with Geonode's error code;
//   - a URL that is not an absolute http(s) URL, or that the job listed in
//     invalid_urls, as an *ItemError with Code CodeInvalidURL.
//
// Cancelled items get no yield. A job still unfinished at the batch
// deadline is cancelled (DELETE /v1/batch/{id}); what finished is yielded,
// the rest gets no yield and stays due, and FetchBatch goes on with the next
// job and finally returns a *BatchTimeoutError (joined, one per job). Any
// other job failure stops FetchBatch with that error: an *APIError from
// creating the job (a 402 is returned before anything is yielded), or an
// error matching ErrJobFailed for a job that ended with URLs unaccounted
// for. When the context ends, the running job is cancelled on a best-effort
// basis and the context's error returned.
func (c *Client) FetchBatch(ctx context.Context, reqs []fetch.Request, yield func(i int, resp *fetch.Response, err error)) error {
	if yield == nil {
		return errors.New("geonode: FetchBatch needs a yield function")
	}
	type bad struct {
		i      int
		reason string
	}
	var invalid []bad
	idx := make([]int, 0, len(reqs))
	for i, r := range reqs {
		if p := pageURLProblem(r.URL); p != "" {
			invalid = append(invalid, bad{i, p})
			continue
		}
		idx = append(idx, i)
	}
	var timeouts []error
	for lo := 0; lo < len(idx); lo += c.cfg.batchSize {
		if err := ctx.Err(); err != nil {
			return errors.Join(append(timeouts, err)...)
		}
		part := idx[lo:min(lo+c.cfg.batchSize, len(idx))]
		err := c.runBatch(ctx, reqs, part, yield)
		var te *BatchTimeoutError
		if err == nil || (errors.As(err, &te) && !IsFatal(err) && ctx.Err() == nil) {
			if err != nil {
				timeouts = append(timeouts, err)
			}
			continue
		}
		return errors.Join(append(timeouts, err)...)
	}
	// URLs rejected locally are yielded last, so that a job refused as a
	// whole (402) yields nothing at all.
	for _, b := range invalid {
		yield(b.i, nil, &ItemError{URL: reqs[b.i].URL, Code: CodeInvalidURL, Message: b.reason})
	}
	return errors.Join(timeouts...)
}

// batchRun is the client-side state of one batch job.
type batchRun struct {
	c      *Client
	id     string
	urls   []string // job position → URL as sent
	reqIdx []int    // job position → index in the caller's reqs
	done   []bool
	left   int // positions not final yet
	// dropped counts positions that ended without outcome (cancelled).
	dropped int
	byURL   map[string][]int
	yield   func(int, *fetch.Response, error)
	// lastFinished is completed+failed+cancelled at the last sweep; a poll
	// whose counters did not move reads only page 1.
	lastFinished int
}

func (c *Client) runBatch(ctx context.Context, reqs []fetch.Request, part []int, yield func(int, *fetch.Response, error)) error {
	const op = "POST /v1/batch"
	urls := make([]string, len(part))
	for k, i := range part {
		urls[k] = reqs[i].URL
	}
	// Never any per-URL header: the configured headers were checked in New
	// to hold no conditional header, and no validator is added here.
	body := batchRequest{URLs: urls, IgnoreInvalidURLs: true, pageSettings: c.settings(nil)}
	ans, _, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/batch", body: body})
	if err != nil {
		return err
	}
	var acc batchAccepted
	if err := decodeJSON(ans.body, &acc); err != nil || acc.JobID == "" {
		if err == nil {
			err = errors.New("job_id is missing")
		}
		return &DecodeError{Op: op, Status: ans.status, Reason: "not an accepted batch job", Snippet: snippet(ans.body), Err: err}
	}
	b := &batchRun{c: c, id: string(acc.JobID), urls: urls, reqIdx: part, done: make([]bool, len(urls)), left: len(urls), yield: yield,
		byURL: make(map[string][]int, len(urls))}
	for k, u := range urls {
		b.byURL[u] = append(b.byURL[u], k)
	}
	c.cfg.logger.DebugContext(ctx, "geonode batch created", "job", b.id, "urls", len(urls), "accepted", acc.AcceptedURLs.v, "invalid", len(acc.InvalidURLs))
	for _, raw := range acc.InvalidURLs {
		b.invalid(ctx, raw)
	}
	if b.left == 0 {
		return nil
	}
	path := c.jobPath(string(acc.StatusURL), "/v1/batch/"+url.PathEscape(b.id))
	clk := c.cfg.clock
	deadline := clk.Now().Add(c.cfg.batchDeadline)
	wait := c.cfg.pollInterval
	status := ""
	for b.left > 0 {
		remaining := deadline.Sub(clk.Now())
		if remaining <= 0 {
			return b.timeout(ctx, path)
		}
		if err := clock.Sleep(ctx, clk, min(wait, remaining)); err != nil {
			b.abandon(ctx)
			return fmt.Errorf("geonode: waiting for batch job %s: %w", b.id, err)
		}
		progressed, terminal, st, err := b.sweep(ctx, path, false)
		status = st
		if err != nil {
			if ctx.Err() != nil {
				b.abandon(ctx)
			}
			return err
		}
		if terminal {
			break
		}
		wait = c.pollWait(wait, progressed)
	}
	if n := b.left + b.dropped; n > 0 {
		return fmt.Errorf("geonode: batch job %s ended %q with %d URL(s) without a result; they stay due: %w", b.id, status, n, ErrJobFailed)
	}
	return nil
}

func terminalStatus(s string) bool {
	switch s {
	case "completed", "failed", "cancelled", "canceled":
		return true
	}
	return false
}

// sweep reads the job's status and, unless nothing moved since the last
// sweep (or full is set), every result page. It reports whether any index
// became final, whether the job was terminal when the sweep began (so every
// page read reflects the final state), and that status.
func (b *batchRun) sweep(ctx context.Context, path string, full bool) (progressed, terminal bool, status string, err error) {
	c := b.c
	size := c.cfg.batchPageSize
	pages := 1
	for page := 1; page <= pages; page++ {
		q := url.Values{"page": {strconv.Itoa(page)}, "page_size": {strconv.Itoa(size)}}
		ans, _, err := c.do(ctx, call{method: http.MethodGet, path: path, query: q, retryTransport: true})
		if err != nil {
			return progressed, false, "", err
		}
		var st batchStatus
		if err := decodeJSON(ans.body, &st); err != nil {
			return progressed, false, "", &DecodeError{Op: "GET /v1/batch/{job_id}", Status: ans.status, Reason: "not a batch status", Snippet: snippet(ans.body), Err: err}
		}
		if page == 1 {
			status = strings.ToLower(string(st.Status))
			terminal = terminalStatus(status)
			// total_urls bounds the pages; a value larger than what was
			// sent is not believed (the job cannot hold more).
			total := st.TotalURLs.v
			if !st.TotalURLs.set || total <= 0 || total > len(b.urls) {
				total = len(b.urls)
			}
			pages = (total + size - 1) / size
			finished := st.CompletedURLs.v + st.FailedURLs.v + st.CancelledURLs.v
			counted := st.TotalURLs.set && st.CompletedURLs.set
			if !full && !terminal && counted && finished == b.lastFinished {
				pages = 1 // nothing finished since the last sweep
			}
			b.lastFinished = finished
			c.cfg.logger.DebugContext(ctx, "geonode batch poll", "job", b.id, "status", status, "finished", finished, "total", total, "left", b.left)
		}
		for _, it := range st.Results {
			if b.handle(ctx, it) {
				progressed = true
			}
		}
		if len(st.Results) == 0 || b.left == 0 {
			break
		}
	}
	return progressed, terminal, status, nil
}

// locate maps a result item to its job position: input_index when it is in
// range and agrees with the item's URL, else the first unresolved position
// sent with that URL (whether input_index counts the invalid URLs is
// [UNCONFIRMED]; a URL Geonode normalised still maps by index). -1 when
// nothing fits.
func (b *batchRun) locate(it batchItemJSON) int {
	u := string(it.URL)
	x, hasIdx := it.InputIndex.v, it.InputIndex.set && it.InputIndex.v >= 0 && it.InputIndex.v < len(b.urls)
	if hasIdx && (u == "" || u == b.urls[x]) {
		return x
	}
	if ks := b.byURL[u]; len(ks) > 0 {
		for _, k := range ks {
			if !b.done[k] {
				return k
			}
		}
		return ks[0] // all resolved: a repeat of a final item
	}
	if hasIdx {
		return x
	}
	return -1
}

// handle yields an item that became final; it reports whether it did.
func (b *batchRun) handle(ctx context.Context, it batchItemJSON) bool {
	k := b.locate(it)
	if k < 0 {
		b.c.cfg.logger.DebugContext(ctx, "geonode batch result matches no URL sent", "job", b.id, "input_index", it.InputIndex.v, "url", string(it.URL))
		return false
	}
	if b.done[k] {
		return false
	}
	u := b.urls[k]
	switch strings.ToLower(string(it.Status)) {
	case "completed", "succeeded", "success", "done":
		resp, err := b.c.toResponse("GET /v1/batch/{job_id}", fetch.Request{URL: u}, it.Data, it.Metadata, flexInt{}, 1)
		b.resolve(k, resp, err, true)
	case "failed", "error":
		code := string(it.ErrorCode)
		if code == "" {
			code = "EXTRACTION_FAILED"
		}
		b.resolve(k, nil, &ItemError{URL: u, JobID: b.id, Code: code, Message: string(it.ErrorMessage)}, true)
	case "cancelled", "canceled":
		b.resolve(k, nil, nil, false) // no outcome: the URL stays due
	default:
		return false // queued, processing, pending...
	}
	return true
}

func (b *batchRun) resolve(k int, resp *fetch.Response, err error, emit bool) {
	b.done[k] = true
	b.left--
	if !emit {
		b.dropped++
		return
	}
	b.yield(b.reqIdx[k], resp, err)
}

// invalid yields one entry of invalid_urls as an ItemError.
func (b *batchRun) invalid(ctx context.Context, raw []byte) {
	u, reason, index, ok := invalidEntry(raw)
	k := -1
	if ok {
		if index >= 0 && index < len(b.urls) && (u == "" || b.urls[index] == u) {
			k = index
		} else {
			for _, p := range b.byURL[u] {
				if !b.done[p] {
					k = p
					break
				}
			}
		}
	}
	if k < 0 || b.done[k] {
		b.c.cfg.logger.DebugContext(ctx, "geonode invalid_urls entry matches no URL sent", "job", b.id, "entry", snippet(raw))
		return
	}
	if reason == "" {
		reason = "Geonode rejected the URL as invalid"
	}
	b.resolve(k, nil, &ItemError{URL: b.urls[k], JobID: b.id, Code: CodeInvalidURL, Message: reason}, true)
}

// timeout cancels a job past its deadline, yields whatever finished
// meanwhile and reports the rest.
func (b *batchRun) timeout(ctx context.Context, path string) error {
	c := b.c
	te := &BatchTimeoutError{JobID: b.id, Deadline: c.cfg.batchDeadline}
	_, _, err := c.do(ctx, call{method: http.MethodDelete, path: "/v1/batch/" + url.PathEscape(b.id), retryTransport: true})
	switch {
	case err == nil:
		te.Cancelled = true
	case errors.Is(err, ErrConflict):
		// Already terminal: the final sweep below reads its results.
	default:
		te.CancelErr = err
	}
	c.cfg.logger.DebugContext(ctx, "geonode batch past its deadline", "job", b.id, "left", b.left, "cancelled", te.Cancelled)
	if _, _, _, serr := b.sweep(ctx, path, true); serr != nil {
		c.cfg.logger.DebugContext(ctx, "geonode final sweep failed", "job", b.id, "err", serr)
	}
	if b.left+b.dropped == 0 {
		return nil
	}
	te.Pending = b.left + b.dropped
	return te
}

// abandon cancels a job whose caller went away, so it stops billing. One
// attempt, bounded, detached from the dead context.
func (b *batchRun) abandon(ctx context.Context) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, _, _, err := b.c.send(dctx, call{method: http.MethodDelete, path: "/v1/batch/" + url.PathEscape(b.id)})
	b.c.cfg.logger.DebugContext(ctx, "geonode batch abandoned", "job", b.id, "cancel_err", err)
}
