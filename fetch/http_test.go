package fetch_test

import (
	"context"
	"errors"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/internal/testsite"
)

func newSite(t *testing.T, opts testsite.Options) *testsite.Site {
	t.Helper()
	s := testsite.New(opts)
	t.Cleanup(s.Close)
	return s
}

func TestConditionalFetch(t *testing.T) {
	s := newSite(t, testsite.Options{Pages: 2})
	f := &fetch.HTTP{UserAgent: "recrawl-test/1.0"}
	u := s.PageURL(s.Paths()[0])

	resp, err := f.Fetch(context.Background(), fetch.Request{URL: u})
	require.NoError(t, err)
	require.Equal(t, 200, resp.Status)
	require.NotEmpty(t, resp.ETag)
	require.NotEmpty(t, resp.LastModified)
	require.Contains(t, resp.ContentType, "text/html")
	require.Contains(t, string(resp.Body), "<h1>Page 1</h1>")
	require.Equal(t, u, resp.FinalURL)
	require.Equal(t, 1, resp.Attempts)

	tests := []struct {
		name string
		req  fetch.Request
	}{
		{"etag", fetch.Request{URL: u, ETag: resp.ETag}},
		{"last-modified", fetch.Request{URL: u, LastModified: resp.LastModified}},
		{"both", fetch.Request{URL: u, ETag: resp.ETag, LastModified: resp.LastModified}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.True(t, tc.req.Conditional())
			r, err := f.Fetch(context.Background(), tc.req)
			require.NoError(t, err)
			require.True(t, r.NotModified())
			require.Empty(t, r.Body)
		})
	}
	log := s.Requests()
	require.Equal(t, "recrawl-test/1.0", log[0].UserAgent)
	require.Equal(t, resp.ETag, log[1].IfNoneMatch)
	require.Equal(t, resp.LastModified, log[2].IfModifiedSince)
}

func TestGoneAndRedirects(t *testing.T) {
	s := newSite(t, testsite.Options{Pages: 4})
	p := s.Paths()
	s.Delete(p[0], http.StatusNotFound)
	s.Delete(p[1], http.StatusGone)
	s.Redirect(p[2], p[3])
	f := &fetch.HTTP{}
	ctx := context.Background()

	for _, path := range p[:2] {
		r, err := f.Fetch(ctx, fetch.Request{URL: s.PageURL(path)})
		require.NoError(t, err)
		require.True(t, r.Gone())
	}
	r, err := f.Fetch(ctx, fetch.Request{URL: s.PageURL(p[2])})
	require.NoError(t, err)
	require.Equal(t, 200, r.Status)
	require.Equal(t, s.PageURL(p[3]), r.FinalURL)

	// A redirect loop stops after MaxRedirects and is not retried.
	s.Redirect(p[3], p[2])
	s.ResetLog()
	_, err = (&fetch.HTTP{MaxRedirects: 3}).Fetch(ctx, fetch.Request{URL: s.PageURL(p[2])})
	require.ErrorIs(t, err, fetch.ErrTooManyRedirects)
	require.Equal(t, 4, s.Count(nil), "one attempt: the first request plus three redirects")
}

func TestRetryAfterIsHonouredOnTheClock(t *testing.T) {
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name       string
		status     int
		retryAfter string
		maxWait    time.Duration
		wantWait   time.Duration
	}{
		{"429 seconds", 429, "7", 0, 7 * time.Second},
		{"503 seconds", 503, "2", 0, 2 * time.Second},
		{"http date", 503, start.Add(90 * time.Second).Format(http.TimeFormat), 0, 90 * time.Second},
		{"rfc850 date", 429, start.Add(30 * time.Second).Format("Monday, 02-Jan-06 15:04:05 GMT"), 0, 30 * time.Second},
		{"hostile header is capped", 503, "864000", 45 * time.Second, 45 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := newSite(t, testsite.Options{Pages: 1})
			path := s.Paths()[0]
			s.Fail(path, tc.status, 1, tc.retryAfter)
			clk := clock.NewAutoFake(start)
			f := &fetch.HTTP{Clock: clk, MaxRetryAfter: tc.maxWait}
			r, err := f.Fetch(context.Background(), fetch.Request{URL: s.PageURL(path)})
			require.NoError(t, err)
			require.Equal(t, 200, r.Status)
			require.Equal(t, 2, r.Attempts)
			require.Equal(t, tc.wantWait, clk.Now().Sub(start))
		})
	}
}

func TestBackoffWithoutRetryAfterIsBoundedJitter(t *testing.T) {
	s := newSite(t, testsite.Options{Pages: 1})
	path := s.Paths()[0]
	s.Fail(path, 503, 10, "")
	start := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clk := clock.NewAutoFake(start)
	f := &fetch.HTTP{Clock: clk, MaxAttempts: 4, BaseBackoff: time.Second, MaxBackoff: 3 * time.Second}
	_, err := f.Fetch(context.Background(), fetch.Request{URL: s.PageURL(path)})
	var se *fetch.StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 503, se.Status)
	require.Equal(t, 4, se.Attempts)
	require.True(t, se.Temporary())
	// Waits: [0,2s] + [0,3s] + [0,3s] (capped), full jitter.
	require.LessOrEqual(t, clk.Now().Sub(start), 8*time.Second)
	require.Equal(t, 4, len(s.Requests()))
}

func TestOtherClientErrorsAreNotRetried(t *testing.T) {
	s := newSite(t, testsite.Options{Pages: 1})
	path := s.Paths()[0]
	s.Fail(path, http.StatusForbidden, 5, "1")
	f := &fetch.HTTP{Clock: clock.NewAutoFake(time.Now())}
	_, err := f.Fetch(context.Background(), fetch.Request{URL: s.PageURL(path)})
	var se *fetch.StatusError
	require.ErrorAs(t, err, &se)
	require.Equal(t, 403, se.Status)
	require.False(t, se.Temporary())
	require.Len(t, s.Requests(), 1)
}

func TestBodyIsCappedAndTimeoutsApply(t *testing.T) {
	s := newSite(t, testsite.Options{Pages: 1})
	s.Huge("/big", 64<<20)
	f := &fetch.HTTP{MaxBytes: 1 << 20}
	_, err := f.Fetch(context.Background(), fetch.Request{URL: s.URL() + "/big"})
	require.ErrorIs(t, err, fetch.ErrTooLarge)
	var tl *fetch.TooLargeError
	require.ErrorAs(t, err, &tl)
	require.EqualValues(t, 1<<20, tl.Limit)
	// The server logs the request once its handler sees the hang-up.
	require.Eventually(t, func() bool { return len(s.Requests()) == 1 }, 5*time.Second, 10*time.Millisecond)
	require.Less(t, s.Requests()[0].Bytes, 64<<20, "the connection was released before the whole body was sent")

	s.Slow("/slow", 2*time.Second)
	f = &fetch.HTTP{Timeout: 50 * time.Millisecond, MaxAttempts: 1}
	_, err = f.Fetch(context.Background(), fetch.Request{URL: s.URL() + "/slow"})
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestCancelledContextStopsTheBackoffWait(t *testing.T) {
	s := newSite(t, testsite.Options{Pages: 1})
	path := s.Paths()[0]
	s.Fail(path, 503, 5, "3600")
	clk := clock.NewFake(time.Now())
	f := &fetch.HTTP{Clock: clk, MaxRetryAfter: time.Hour}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := f.Fetch(ctx, fetch.Request{URL: s.PageURL(path)})
		done <- err
	}()
	require.NoError(t, clk.BlockUntil(context.Background(), 1))
	cancel()
	err := <-done
	require.True(t, errors.Is(err, context.Canceled), err)
	require.Len(t, s.Requests(), 1)
}

func TestBadURL(t *testing.T) {
	_, err := (&fetch.HTTP{}).Fetch(context.Background(), fetch.Request{URL: "http://[::1"})
	require.Error(t, err)
}

func TestAcceptRefusesTypesUnread(t *testing.T) {
	s := newSite(t, testsite.Options{Pages: 1})
	big := make([]byte, 4<<20)
	img := s.AddRaw("/docs/big.png", "image/png", big)
	f := &fetch.HTTP{MaxBytes: 1 << 20, Accept: func(ct string) bool { return ct == "text/html; charset=utf-8" }}
	resp, err := f.Fetch(context.Background(), fetch.Request{URL: img})
	require.NoError(t, err, "a refused type is an answer, not a size failure")
	require.Equal(t, http.StatusOK, resp.Status)
	require.Equal(t, "image/png", resp.ContentType)
	require.Empty(t, resp.Body, "the body is not read")
	page, err := f.Fetch(context.Background(), fetch.Request{URL: s.PageURL(s.Paths()[0])})
	require.NoError(t, err)
	require.NotEmpty(t, page.Body)
}

func TestOffHostRedirectIsNotFollowed(t *testing.T) {
	a := newSite(t, testsite.Options{Pages: 2})
	b := newSite(t, testsite.Options{Pages: 2})
	p := a.Paths()
	a.Redirect(p[0], b.PageURL(b.Paths()[1]))
	a.Redirect(p[1], p[0]) // on-site first, then off

	for _, path := range p {
		a.ResetLog()
		_, err := (&fetch.HTTP{}).Fetch(context.Background(), fetch.Request{URL: a.PageURL(path)})
		var oe *fetch.OffHostRedirectError
		require.ErrorAs(t, err, &oe, path)
		require.ErrorIs(t, err, fetch.ErrOffHostRedirect)
		require.Equal(t, a.PageURL(path), oe.URL, "named after the URL first requested")
		require.Equal(t, b.PageURL(b.Paths()[1]), oe.Location)
		require.Zero(t, b.Count(nil), "the other host is never requested")
		hops := 1
		if path == p[1] {
			hops = 2 // the on-site redirect is followed
		}
		require.Len(t, a.Requests(), hops, "not retried")
	}

	resp, err := (&fetch.HTTP{AllowOffHostRedirects: true}).Fetch(context.Background(), fetch.Request{URL: a.PageURL(p[0])})
	require.NoError(t, err)
	require.Equal(t, b.PageURL(b.Paths()[1]), resp.FinalURL)
}

func TestStayOnSite(t *testing.T) {
	a := newSite(t, testsite.Options{Pages: 2})
	b := newSite(t, testsite.Options{Pages: 1})
	a.Redirect(a.Paths()[0], b.PageURL(b.Paths()[0]))
	a.Redirect(a.Paths()[1], a.Paths()[0])
	c := &http.Client{CheckRedirect: fetch.StayOnSite(nil)}
	resp, err := c.Get(a.PageURL(a.Paths()[1]))
	if resp != nil {
		resp.Body.Close()
	}
	require.ErrorIs(t, err, fetch.ErrOffHostRedirect)
	require.Zero(t, b.Count(nil))
	require.Equal(t, 2, a.Count(nil), "the on-site hop is followed")
}

// A body is read whole, with or without a declared length, and a body
// over MaxBytes fails as before: pages served with a length (small ones)
// and without one (generated, chunked), at and over the cap.
func TestBodyReadWithAndWithoutLength(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 1})
	defer site.Close()
	big := strings.Repeat("0123456789", 10_000)
	declared := site.Serve("/declared.html", "text/html", []byte(big[:1500]))
	chunked := site.Generate("/chunked.html", "text/html", "", 10_000, func(int) string { return "0123456789" }, "")
	cases := []struct {
		name     string
		url      string
		maxBytes int64
		want     string
		tooLarge bool
	}{
		{name: "declared", url: declared, want: big[:1500]},
		{name: "declared at the cap", url: declared, maxBytes: 1500, want: big[:1500]},
		{name: "declared over the cap", url: declared, maxBytes: 1499, tooLarge: true},
		{name: "chunked", url: chunked, want: big},
		{name: "chunked at the cap", url: chunked, maxBytes: 100_000, want: big},
		{name: "chunked over the cap", url: chunked, maxBytes: 99_999, tooLarge: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			for range 3 { // a pooled buffer is reused without leaking into the next body
				h := &fetch.HTTP{MaxBytes: c.maxBytes, MaxAttempts: 1}
				resp, err := h.Fetch(t.Context(), fetch.Request{URL: c.url})
				if c.tooLarge {
					require.ErrorIs(t, err, fetch.ErrTooLarge)
					continue
				}
				require.NoError(t, err)
				require.Equal(t, c.want, string(resp.Body))
				require.LessOrEqual(t, cap(resp.Body), len(c.want)*9/8+64, "the body is stored at about its size")
			}
		})
	}
}

// A server that declares a large body and sends a few bytes before it
// hangs up does not make the fetch reserve the declared size: the read
// fails, and what it allocated stays far below the 9 MiB declared.
func TestOverclaimedLengthReservesLittle(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 1})
	defer site.Close()
	site.Overclaim("/big.html", 9<<20)
	h := &fetch.HTTP{MaxAttempts: 1}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := h.Fetch(t.Context(), fetch.Request{URL: site.PageURL("/big.html")})
	runtime.ReadMemStats(&after)
	require.Error(t, err, "the body ended before its declared length")
	require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(4<<20), "bytes allocated by the fetch")
}
