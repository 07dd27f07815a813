package main

import (
	"io"
	"mime"
	"net/http"
	"sync"

	"github.com/recrawl/recrawl/normalize"
)

// maxRedirectHops bounds how far take follows recorded redirects.
const maxRedirectHops = 20

// capture is one page body as the engine received it.
type capture struct {
	url         string // the URL of the answering request, after redirects
	contentType string
	body        []byte
}

// recorder is an http.RoundTripper under the engine's polite transport: it
// keeps a copy of every textual 2xx body the engine reads, and every
// redirect, keyed by normalized URL, until the page's outcome event takes
// it. Robots-denied requests never reach it. Bodies are copied only as far
// as the engine reads them, so a capture is never larger than the body the
// engine saw (at most WEB_MAX_BYTES + 1).
type recorder struct {
	next http.RoundTripper
	norm normalize.Policy

	mu        sync.Mutex
	off       bool
	bodies    map[string]capture
	redirects map[string]string
}

func newRecorder(next http.RoundTripper, norm normalize.Policy) *recorder {
	if next == nil {
		next = http.DefaultTransport
	}
	return &recorder{next: next, norm: norm, bodies: map[string]capture{}, redirects: map[string]string{}}
}

// RoundTrip implements http.RoundTripper.
func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.next.RoundTrip(req)
	if err != nil || req.Method != http.MethodGet {
		return resp, err
	}
	r.mu.Lock()
	off := r.off
	r.mu.Unlock()
	if off {
		return resp, nil
	}
	key, nerr := r.norm.URL(req.URL.String())
	if nerr != nil {
		return resp, nil
	}
	switch {
	case resp.StatusCode >= 300 && resp.StatusCode < 400:
		if loc, lerr := req.URL.Parse(resp.Header.Get("Location")); lerr == nil && resp.Header.Get("Location") != "" {
			if to, nerr := r.norm.URL(loc.String()); nerr == nil {
				r.mu.Lock()
				r.redirects[key] = to
				r.mu.Unlock()
			}
		}
	case resp.StatusCode >= 200 && resp.StatusCode < 300 && textual(resp.Header.Get("Content-Type")):
		resp.Body = &teeBody{ReadCloser: resp.Body, r: r, key: key,
			c: capture{url: req.URL.String(), contentType: resp.Header.Get("Content-Type")}}
	}
	return resp, nil
}

// textual reports whether the engine turns a body of this type into text
// (and so whether it is worth keeping).
func textual(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "", "text/html", "application/xhtml+xml", "text/markdown", "text/x-markdown", "text/plain":
		return true
	}
	return false
}

// take returns and forgets the body that answered url, following the
// redirects recorded from it.
func (r *recorder) take(url string) (capture, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := url
	for range maxRedirectHops {
		to, ok := r.redirects[key]
		if !ok {
			break
		}
		delete(r.redirects, key)
		key = to
	}
	c, ok := r.bodies[key]
	delete(r.bodies, key)
	return c, ok
}

// stop ends recording and forgets everything not taken (bodies of
// documents such as robots.txt or llms.txt, runs cut short).
func (r *recorder) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.off = true
	r.bodies, r.redirects = map[string]capture{}, map[string]string{}
}

// teeBody copies what the engine reads and files the copy on Close.
type teeBody struct {
	io.ReadCloser
	r    *recorder
	key  string
	c    capture
	done bool
}

func (t *teeBody) Read(p []byte) (int, error) {
	n, err := t.ReadCloser.Read(p)
	t.c.body = append(t.c.body, p[:n]...)
	return n, err
}

func (t *teeBody) Close() error {
	err := t.ReadCloser.Close()
	if !t.done {
		t.done = true
		t.r.mu.Lock()
		if !t.r.off {
			t.r.bodies[t.key] = t.c
		}
		t.r.mu.Unlock()
	}
	return err
}
