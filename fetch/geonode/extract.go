package geonode

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/fetch"
)

// Content types of a Response's Body.
const (
	ContentTypeMarkdown = "text/markdown; charset=utf-8"
	ContentTypeHTML     = "text/html; charset=utf-8"
)

// Fetch implements fetch.Fetcher with POST /v1/extract. The request's
// validators travel to the origin in the headers object (If-None-Match,
// If-Modified-Since). The origin's status comes from metadata.http_status:
// 2xx is a Response with the Markdown (or HTML) body, 304 a Response with
// Status 304 (carrying the request's validators, which the origin just
// confirmed), 404 and 410 a Response the caller treats as gone; any other
// origin status is a *fetch.StatusError. API failures are *APIError; an
// async job that fails is an *ItemError, one that outlives the job deadline
// an *ExtractTimeoutError.
//
// Response.Billed is the answer's tokens_charged (1 when the field is
// absent from a successful answer: the billing docs charge one request per
// extracted page). Response.Attempts counts the POST requests (polls
// excluded). A 304 costs a billed request too: the extraction ran.
func (c *Client) Fetch(ctx context.Context, req fetch.Request) (*fetch.Response, error) {
	if err := checkPageURL(req.URL); err != nil {
		return nil, err
	}
	mode := "sync"
	if c.cfg.async {
		mode = "async"
	}
	body := extractRequest{URL: req.URL, ProcessingMode: mode, pageSettings: c.settings(conditional(req))}
	ans, attempts, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/extract", body: body, page: req.URL, retryTransport: true})
	if err != nil {
		return nil, err
	}
	if ans.status == http.StatusAccepted {
		// Async (also if the API chose async on its own).
		return c.awaitExtract(ctx, req, ans, attempts)
	}
	var res extractResult
	if err := decodeJSON(ans.body, &res); err != nil {
		return nil, &DecodeError{Op: "POST /v1/extract", Status: ans.status, Reason: "not an extraction result", Snippet: snippet(ans.body), Err: err}
	}
	return c.toResponse("POST /v1/extract", req, res.Data, res.Metadata, res.TokensCharged, attempts)
}

// conditional returns the origin headers carrying req's validators.
func conditional(req fetch.Request) map[string]string {
	if !req.Conditional() {
		return nil
	}
	h := map[string]string{}
	if req.ETag != "" {
		h["If-None-Match"] = req.ETag
	}
	if req.LastModified != "" {
		h["If-Modified-Since"] = req.LastModified
	}
	return h
}

// settings builds the per-page fields shared by extract and batch; extra
// headers (the validators) are merged over the configured ones.
func (c *Client) settings(extra map[string]string) pageSettings {
	s := pageSettings{Formats: c.cfg.formats, RenderJS: c.cfg.renderJS}
	if p := c.cfg.proxy; p != nil {
		pj := &proxyJSON{Type: p.Type}
		if p.Country != "" {
			pj.Country = &p.Country
		}
		s.Proxy = pj
	}
	if w := c.cfg.waitConfig; w != nil {
		s.WaitConfig = &waitJSON{WaitUntil: w.WaitUntil, WaitFor: w.WaitFor, WaitTimeout: w.WaitTimeout.Milliseconds()}
	}
	if len(c.cfg.headers)+len(extra) > 0 {
		s.Headers = make(map[string]string, len(c.cfg.headers)+len(extra))
		for k, v := range c.cfg.headers {
			s.Headers[k] = v
		}
		for k, v := range extra {
			s.Headers[k] = v
		}
	}
	return s
}

// checkPageURL rejects what no extraction can fetch, before anything is
// sent or billed.
func checkPageURL(raw string) error {
	if p := pageURLProblem(raw); p != "" {
		return fmt.Errorf("%w: %s", ErrInvalidURL, p)
	}
	return nil
}

// pageURLProblem says what makes raw unusable as a page URL ("" if nothing).
func pageURLProblem(raw string) string {
	u, err := url.Parse(raw)
	switch {
	case raw == "":
		return "empty URL"
	case err != nil:
		return fmt.Sprintf("%q does not parse: %v", raw, err)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Sprintf("%q: only absolute http and https URLs can be extracted", raw)
	case u.Host == "":
		return fmt.Sprintf("%q has no host", raw)
	case strings.ContainsAny(raw, " \t\r\n"):
		return fmt.Sprintf("%q contains white space", raw)
	}
	return ""
}

// toResponse turns an extraction's data and metadata into the outcome
// fetch.Fetcher promises.
func (c *Client) toResponse(op string, req fetch.Request, data *contentJSON, meta *metadataJSON, tokens flexInt, attempts int) (*fetch.Response, error) {
	if meta == nil || !meta.HTTPStatus.set {
		return nil, &DecodeError{Op: op, Status: http.StatusOK, Reason: "metadata.http_status is missing, so the origin's answer is unknown"}
	}
	st := meta.HTTPStatus.v
	if st < 100 || st > 599 {
		return nil, &DecodeError{Op: op, Status: http.StatusOK, Reason: fmt.Sprintf("metadata.http_status %d is not an HTTP status", st)}
	}
	billed := 1
	if tokens.set {
		billed = max(tokens.v, 0)
	} else if meta.TokensCharged.set {
		billed = max(meta.TokensCharged.v, 0)
	}
	resp := &fetch.Response{URL: req.URL, FinalURL: finalURL(req.URL, string(meta.URL)), Status: st, Attempts: attempts, Billed: billed}
	switch {
	case st == http.StatusNotModified:
		resp.ETag, resp.LastModified = req.ETag, req.LastModified
		return resp, nil
	case resp.Gone():
		return resp, nil
	case st >= 200 && st < 300:
		body, ctype := c.pickBody(data)
		if int64(len(body)) > c.cfg.maxBytes {
			return nil, &fetch.TooLargeError{URL: req.URL, Limit: c.cfg.maxBytes}
		}
		resp.Body, resp.ContentType = []byte(body), ctype
		return resp, nil
	default:
		return nil, &fetch.StatusError{URL: req.URL, Status: st, Attempts: attempts, Billed: billed}
	}
}

// pickBody chooses the body: the Markdown when it was requested and came
// back, else the HTML. Absent and null formats are the same.
func (c *Client) pickBody(d *contentJSON) (string, string) {
	wantMD := false
	for _, f := range c.cfg.formats {
		if f == Markdown {
			wantMD = true
		}
	}
	if d == nil {
		if wantMD {
			return "", ContentTypeMarkdown
		}
		return "", ContentTypeHTML
	}
	switch {
	case wantMD && d.Markdown != nil:
		return *d.Markdown, ContentTypeMarkdown
	case d.HTML != nil:
		return *d.HTML, ContentTypeHTML
	case d.Markdown != nil:
		return *d.Markdown, ContentTypeMarkdown
	case wantMD:
		return "", ContentTypeMarkdown
	}
	return "", ContentTypeHTML
}

// finalURL returns metadata.url when it is an absolute http(s) URL, else
// the requested URL. Whether metadata.url is the URL after redirects is
// [UNCONFIRMED]; the docs show it normalised (a trailing slash added), so
// it is at least the address Geonode fetched.
func finalURL(requested, meta string) string {
	if meta == "" {
		return requested
	}
	u, err := url.Parse(meta)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return requested
	}
	return meta
}

// awaitExtract polls an accepted async extraction until it completes,
// fails, is cancelled or outlives the job deadline.
func (c *Client) awaitExtract(ctx context.Context, req fetch.Request, ans *answer, attempts int) (*fetch.Response, error) {
	const op = "POST /v1/extract"
	var acc jobAccepted
	if err := decodeJSON(ans.body, &acc); err != nil || acc.JobID == "" {
		if err == nil {
			err = errors.New("job_id is missing")
		}
		return nil, &DecodeError{Op: op, Status: ans.status, Reason: "not an accepted job", Snippet: snippet(ans.body), Err: err}
	}
	id := string(acc.JobID)
	path := c.jobPath(string(acc.StatusURL), "/v1/extract/"+url.PathEscape(id))
	clk := c.cfg.clock
	deadline := clk.Now().Add(c.cfg.jobDeadline)
	wait := c.cfg.pollInterval
	for {
		remaining := deadline.Sub(clk.Now())
		if remaining <= 0 {
			return nil, &ExtractTimeoutError{URL: req.URL, JobID: id, Deadline: c.cfg.jobDeadline}
		}
		if err := clock.Sleep(ctx, clk, min(wait, remaining)); err != nil {
			return nil, fmt.Errorf("geonode: waiting for extraction job %s of %s: %w", id, req.URL, err)
		}
		wait = min(wait*2, c.cfg.maxPollInterval)
		got, _, err := c.do(ctx, call{method: http.MethodGet, path: path, page: req.URL, retryTransport: true})
		if err != nil {
			return nil, err
		}
		var job extractJob
		if err := decodeJSON(got.body, &job); err != nil {
			return nil, &DecodeError{Op: "GET /v1/extract/{job_id}", Status: got.status, Reason: "not a job status", Snippet: snippet(got.body), Err: err}
		}
		st := strings.ToLower(string(job.Status))
		c.cfg.logger.DebugContext(ctx, "geonode extraction job", "job", id, "status", st)
		switch st {
		case "completed", "succeeded", "success", "done":
			return c.toResponse("GET /v1/extract/{job_id}", req, job.Data, job.Metadata, job.TokensCharged, attempts)
		case "failed", "error":
			ie := &ItemError{URL: req.URL, JobID: id, Code: "EXTRACTION_FAILED"}
			if e := job.Error; e != nil {
				if e.Code != "" {
					ie.Code = string(e.Code)
				}
				ie.Message, ie.Retryable = string(e.Message), e.Retryable.v
			}
			return nil, ie
		case "cancelled", "canceled":
			return nil, &ItemError{URL: req.URL, JobID: id, Code: CodeCancelled, Message: "the extraction job was cancelled"}
		}
		// queued, processing, or a status this client does not know: the
		// job is not final; keep polling until the deadline.
	}
}

// pollWait grows a poll interval while a job makes no progress.
func (c *Client) pollWait(cur time.Duration, progressed bool) time.Duration {
	if progressed {
		return c.cfg.pollInterval
	}
	return min(cur*2, c.cfg.maxPollInterval)
}
