package discover

import (
	"context"
	"errors"
	"fmt"
	"github.com/recrawl/recrawl/crawlstate"
	"io"
	"net/http"
)

// ErrTooLarge is matched by errors.Is for a document whose body is larger
// than Env.MaxBytes, or a crawled page larger than Env.MaxPageBytes.
// Sitemaps report the sitemap parser's own *sitemap.TooLargeError,
// wrapped with the same advice.
var ErrTooLarge = errors.New("discover: body too large")

// documentCapHint and pageCapHint name the settings that bound a document
// and a crawled page, for error messages.
const (
	documentCapHint = "the discovery document cap: WEB_MAX_DOCUMENT_BYTES, Env.MaxBytes"
	pageCapHint     = "the page cap: WEB_MAX_BYTES, Env.MaxPageBytes"
)

// SkipInvalid is the Skip reason for a listed link that is not an absolute
// http(s) URL even after resolving it against its document.
const SkipInvalid = "invalid"

// SkipTooLong is the Skip reason for a sitemap <loc> longer than the
// sitemap parser's limit (sitemap.DefaultMaxLocBytes); the link's URL is
// the value cut to 200 bytes.
const SkipTooLong = "too_long"

// conditional reports whether sources request their documents
// conditionally: both a store for validators and an OnUnchanged to report
// a 304 are needed.
func (e Env) conditional() bool { return e.Documents != nil && e.OnUnchanged != nil }

// stored returns what Env.Documents remembers about url; ok is false
// without a store or without a record.
func (e Env) stored(ctx context.Context, url string) (crawlstate.Document, bool, error) {
	if e.Documents == nil {
		return crawlstate.Document{}, false, nil
	}
	info, err := e.Documents.Document(ctx, e.Source, url)
	if errors.Is(err, crawlstate.ErrNotFound) {
		return crawlstate.Document{}, false, nil
	}
	if err != nil {
		return crawlstate.Document{}, false, fmt.Errorf("discover: reading the stored state of %s: %w", url, err)
	}
	return info, true, nil
}

// validators returns the validators to send for a stored document: none
// unless requests are conditional.
func (e Env) validators(info crawlstate.Document, ok bool) Validators {
	if !ok || !e.conditional() {
		return Validators{}
	}
	return Validators{ETag: info.ETag, LastModified: info.LastModified}
}

func (v Validators) empty() bool { return v.ETag == "" && v.LastModified == "" }

// setOn adds the conditional headers for v to h.
func (v Validators) setOn(h http.Header) {
	if v.ETag != "" {
		h.Set("If-None-Match", v.ETag)
	}
	if v.LastModified != "" {
		h.Set("If-Modified-Since", v.LastModified)
	}
}

// getDocument requests a discovery document with env.Client, sending v as
// conditional headers. It returns the response for a 200, or for a 304
// when validators were sent; the caller closes its body. Anything else is
// a *FetchError.
func getDocument(ctx context.Context, env Env, rawURL, accept string, v Validators) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, &FetchError{URL: rawURL, Err: err}
	}
	req.Header.Set("Accept", accept)
	v.setOn(req.Header)
	resp, err := env.Client.Do(req)
	if err != nil {
		return nil, &FetchError{URL: rawURL, Err: err}
	}
	if resp.StatusCode == http.StatusOK || (resp.StatusCode == http.StatusNotModified && !v.empty()) {
		return resp, nil
	}
	discardBody(resp)
	return nil, &FetchError{URL: rawURL, Status: resp.StatusCode}
}

// discardBody reads a little of an unwanted body, so the connection can be
// reused, and closes it.
func discardBody(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
	_ = resp.Body.Close()
}

// readLimited reads r to its end, failing with ErrTooLarge past max bytes.
func readLimited(r io.Reader, max int64) ([]byte, error) {
	return readCapped(r, max, documentCapHint)
}

// readCapped is readLimited for a body under the cap hint names (a
// discovery document's or a page's).
func readCapped(r io.Reader, max int64, hint string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: more than %d bytes (%s)", ErrTooLarge, max, hint)
	}
	return b, nil
}

// finalURL is the URL a response came from, after redirects.
func finalURL(resp *http.Response, requested string) string {
	if resp.Request != nil && resp.Request.URL != nil {
		return resp.Request.URL.String()
	}
	return requested
}

// stopError carries an error that must end discovery as is (a yield,
// OnUnchanged or DocumentStore failure), through code that would otherwise
// treat it as one unreadable document.
type stopError struct{ err error }

func (e *stopError) Error() string { return e.err.Error() }
func (e *stopError) Unwrap() error { return e.err }
