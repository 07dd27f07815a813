package alert_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/clock"
)

const secret = "s3cr3t-shared-with-receiver"

// receiver is a webhook endpoint that checks every request the way a real
// receiver should and deduplicates by Idempotency-Key.
type receiver struct {
	t *testing.T

	mu        sync.Mutex
	requests  int
	keys      []string          // Idempotency-Key per request
	bodies    [][]byte          // raw bodies per request
	delivered map[string]string // ID -> URL, deduplicated
	respond   func(n int, w http.ResponseWriter, r *http.Request) bool
}

func newReceiver(t *testing.T, respond func(n int, w http.ResponseWriter, r *http.Request) bool) (*receiver, *httptest.Server) {
	rc := &receiver{t: t, delivered: map[string]string{}, respond: respond}
	srv := httptest.NewServer(rc)
	t.Cleanup(srv.Close)
	return rc, srv
}

// ServeHTTP verifies the request, then lets respond answer; when respond
// returns true the request counts as accepted (2xx is written here).
func (rc *receiver) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, "read body", http.StatusBadRequest)
		return
	}
	rc.mu.Lock()
	rc.requests++
	n := rc.requests
	rc.keys = append(rc.keys, r.Header.Get(alert.IdempotencyHeader))
	rc.bodies = append(rc.bodies, body)
	respond := rc.respond
	rc.mu.Unlock()

	if r.Method != http.MethodPost || r.Header.Get("Content-Type") != "application/json" || r.Header.Get("User-Agent") == "" {
		http.Error(w, "want a JSON POST with a User-Agent", http.StatusBadRequest)
		return
	}
	if !alert.VerifySignature(secret, body, r.Header.Get(alert.SignatureHeader)) {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var a alert.Alert
	if err := json.Unmarshal(body, &a); err != nil || a.ID != r.Header.Get(alert.IdempotencyHeader) {
		http.Error(w, "body id does not match Idempotency-Key", http.StatusBadRequest)
		return
	}
	if respond != nil && !respond(n, w, r) {
		return
	}
	rc.mu.Lock()
	rc.delivered[a.ID] = a.URL
	rc.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (rc *receiver) count() int {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.requests
}

func TestWebhookDeliversSignedAlert(t *testing.T) {
	rc, srv := newReceiver(t, nil)
	a := sampleAlerts()[1]
	require.NoError(t, alert.Webhook(srv.URL+"/hooks/recrawl", secret).Deliver(context.Background(), a))
	require.Equal(t, 1, rc.count())
	require.Equal(t, []string{a.ID}, rc.keys)
	require.Equal(t, map[string]string{a.ID: a.URL}, rc.delivered)

	// The body is the alert's JSON and the signature is HMAC-SHA256 of it,
	// computed here independently of the package.
	var back alert.Alert
	require.NoError(t, json.Unmarshal(rc.bodies[0], &back))
	require.Equal(t, a, back)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(rc.bodies[0])
	require.True(t, alert.VerifySignature(secret, rc.bodies[0], "sha256="+hex.EncodeToString(m.Sum(nil))))
}

func TestWebhookRetries503HonouringRetryAfter(t *testing.T) {
	rc, srv := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) bool {
		if n == 1 {
			w.Header().Set("Retry-After", "2")
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return false
		}
		return true
	})
	clk := clock.NewAutoFake(t0)
	a := sampleAlerts()[0]
	require.NoError(t, alert.Webhook(srv.URL, secret, alert.WithClock(clk)).Deliver(context.Background(), a))
	require.Equal(t, 2, rc.count())
	require.Equal(t, 2*time.Second, clk.Now().Sub(t0), "waited exactly Retry-After")
	require.Equal(t, []string{a.ID, a.ID}, rc.keys)
	require.Equal(t, rc.bodies[0], rc.bodies[1], "a retry sends the same bytes")
}

func TestWebhookRetryAfterForms(t *testing.T) {
	cases := []struct {
		name       string
		retryAfter func(now time.Time) string
		status     int
		opts       []alert.WebhookOption
		want       time.Duration
	}{
		{"429 seconds", func(time.Time) string { return "7" }, http.StatusTooManyRequests, nil, 7 * time.Second},
		{"HTTP date", func(now time.Time) string { return now.Add(5 * time.Second).Format(http.TimeFormat) }, http.StatusServiceUnavailable, nil, 5 * time.Second},
		{"date in the past", func(now time.Time) string { return now.Add(-time.Hour).Format(http.TimeFormat) }, http.StatusServiceUnavailable, nil, 0},
		{"capped", func(time.Time) string { return "3600" }, http.StatusTooManyRequests, []alert.WebhookOption{alert.WithMaxRetryAfter(10 * time.Second)}, 10 * time.Second},
		{"default cap", func(time.Time) string { return "999999999999" }, http.StatusTooManyRequests, nil, alert.DefaultWebhookMaxRetryAfter},
		{"408 with seconds", func(time.Time) string { return "1" }, http.StatusRequestTimeout, nil, time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clk := clock.NewAutoFake(t0)
			rc, srv := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) bool {
				if n == 1 {
					w.Header().Set("Retry-After", c.retryAfter(clk.Now()))
					w.WriteHeader(c.status)
					return false
				}
				return true
			})
			opts := append([]alert.WebhookOption{alert.WithClock(clk)}, c.opts...)
			require.NoError(t, alert.Webhook(srv.URL, secret, opts...).Deliver(context.Background(), sampleAlerts()[0]))
			require.Equal(t, 2, rc.count())
			require.Equal(t, c.want, clk.Now().Sub(t0))
		})
	}
}

func TestWebhookBackoffWithoutRetryAfter(t *testing.T) {
	rc, srv := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) bool {
		if n <= 3 {
			w.WriteHeader(http.StatusBadGateway)
			return false
		}
		return true
	})
	clk := clock.NewAutoFake(t0)
	s := alert.Webhook(srv.URL, secret, alert.WithClock(clk), alert.WithBackoff(time.Second, 3*time.Second))
	require.NoError(t, s.Deliver(context.Background(), sampleAlerts()[0]))
	require.Equal(t, 4, rc.count())
	// Waits of 1 s, 2 s and 3 s (capped), each in its upper half.
	waited := clk.Now().Sub(t0)
	require.GreaterOrEqual(t, waited, 3*time.Second)
	require.LessOrEqual(t, waited, 6*time.Second)
}

func TestWebhookPermanentFailures(t *testing.T) {
	long := strings.Repeat("错误 detail ", 200)
	cases := []struct {
		name   string
		status int
		body   string
	}{
		{"400", http.StatusBadRequest, "alert schema rejected"},
		{"404", http.StatusNotFound, "no such hook"},
		{"422 long body", http.StatusUnprocessableEntity, long},
		{"410", http.StatusGone, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rc, srv := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) bool {
				w.WriteHeader(c.status)
				_, _ = io.WriteString(w, c.body)
				return false
			})
			clk := clock.NewAutoFake(t0)
			err := alert.Webhook(srv.URL, secret, alert.WithClock(clk)).Deliver(context.Background(), sampleAlerts()[0])
			var werr *alert.WebhookError
			require.ErrorAs(t, err, &werr)
			require.Equal(t, c.status, werr.Status)
			require.False(t, werr.Temporary())
			require.Equal(t, 1, rc.count(), "not retried")
			require.Equal(t, t0, clk.Now(), "no wait")
			require.LessOrEqual(t, len(werr.Body), 512+len("…"))
			require.True(t, strings.HasPrefix(c.body, strings.TrimSuffix(werr.Body, "…")))
			require.ErrorContains(t, err, sampleAlerts()[0].ID)
		})
	}
}

func TestWebhookErrorTemporary(t *testing.T) {
	for status, want := range map[int]bool{200: false, 307: false, 400: false, 401: false, 404: false, 408: true, 409: false, 429: true, 500: true, 502: true, 503: true, 504: true} {
		require.Equal(t, want, (&alert.WebhookError{Status: status}).Temporary(), status)
	}
}

func TestWebhookUncertainAcknowledgement(t *testing.T) {
	// The receiver reads and stores the alert, then answers 500: the
	// sender cannot know it was accepted.
	var accepted sync.Map
	rc, srv := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) bool {
		accepted.Store(r.Header.Get(alert.IdempotencyHeader), true)
		w.WriteHeader(http.StatusInternalServerError)
		return false
	})
	clk := clock.NewAutoFake(t0)
	a := sampleAlerts()[1]
	s := alert.Webhook(srv.URL, secret, alert.WithClock(clk), alert.WithMaxAttempts(3))
	err := s.Deliver(context.Background(), a)
	var werr *alert.WebhookError
	require.ErrorAs(t, err, &werr)
	require.Equal(t, http.StatusInternalServerError, werr.Status)
	require.True(t, werr.Temporary())
	require.ErrorContains(t, err, "not acknowledged after 3 attempts")
	require.Equal(t, []string{a.ID, a.ID, a.ID}, rc.keys, "every attempt carries the same key")

	// The engine redelivers the same alert later; this time the receiver
	// acknowledges, and its dedupe by key leaves one notification.
	rc.mu.Lock()
	rc.respond = nil
	rc.mu.Unlock()
	require.NoError(t, s.Deliver(context.Background(), a))
	require.Len(t, rc.delivered, 1)
	require.Equal(t, []string{a.ID, a.ID, a.ID, a.ID}, rc.keys)
	_, ok := accepted.Load(a.ID)
	require.True(t, ok)
}

func TestWebhookRetriesNetworkErrors(t *testing.T) {
	var mu sync.Mutex
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.ReadAll(r.Body)
		mu.Lock()
		calls++
		n := calls
		mu.Unlock()
		if n == 1 {
			// Hang up without an answer.
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	clk := clock.NewAutoFake(t0)
	require.NoError(t, alert.Webhook(srv.URL, secret, alert.WithClock(clk)).Deliver(context.Background(), sampleAlerts()[0]))
	require.Equal(t, 2, calls)
	require.Greater(t, clk.Now().Sub(t0), time.Duration(0), "backed off before retrying")
}

func TestWebhookUnreachableGivesUpAfterMaxAttempts(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL + "/hook?token=tok3n"
	srv.Close() // nothing listens any more
	clk := clock.NewAutoFake(t0)
	err := alert.Webhook(url, secret, alert.WithClock(clk), alert.WithMaxAttempts(4)).Deliver(context.Background(), sampleAlerts()[0])
	require.ErrorContains(t, err, "after 4 attempts")
	require.NotContains(t, err.Error(), "tok3n", "the URL's query is not in errors")
}

func TestWebhookPerAttemptTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	rc, srv := newReceiver(t, func(n int, w http.ResponseWriter, r *http.Request) bool {
		if n == 1 {
			select { // hold the first request until the client gives up
			case <-r.Context().Done():
			case <-release:
			}
			return false
		}
		return true
	})
	clk := clock.NewAutoFake(t0)
	s := alert.Webhook(srv.URL, secret, alert.WithClock(clk), alert.WithTimeout(100*time.Millisecond))
	require.NoError(t, s.Deliver(context.Background(), sampleAlerts()[0]))
	require.Equal(t, 2, rc.count())
}

func TestWebhookContextCancelDuringBackoff(t *testing.T) {
	rc, srv := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		w.WriteHeader(http.StatusServiceUnavailable)
		return false
	})
	clk := clock.NewFake(t0) // manual: the backoff waits until cancelled
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- alert.Webhook(srv.URL, secret, alert.WithClock(clk)).Deliver(ctx, sampleAlerts()[0])
	}()
	require.NoError(t, clk.BlockUntil(context.Background(), 1))
	cancel()
	err := <-done
	require.ErrorIs(t, err, context.Canceled)
	var werr *alert.WebhookError
	require.ErrorAs(t, err, &werr, "the last failure is kept")
	require.Equal(t, 1, rc.count())
	require.Zero(t, clk.Waiters(), "the backoff timer was stopped")
	require.Equal(t, t0, clk.Now())
}

func TestWebhookContextCancelledBeforehand(t *testing.T) {
	rc, srv := newReceiver(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := alert.Webhook(srv.URL, secret).Deliver(ctx, sampleAlerts()[0])
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, rc.count())
}

func TestWebhookDoesNotFollowRedirects(t *testing.T) {
	target, tsrv := newReceiver(t, nil)
	_, srv := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) bool {
		http.Redirect(w, r, tsrv.URL, http.StatusTemporaryRedirect)
		return false
	})
	// Even a client configured to follow redirects does not.
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
	err := alert.Webhook(srv.URL, secret, alert.WithHTTPClient(client)).Deliver(context.Background(), sampleAlerts()[0])
	var werr *alert.WebhookError
	require.ErrorAs(t, err, &werr)
	require.Equal(t, http.StatusTemporaryRedirect, werr.Status)
	require.ErrorContains(t, err, "redirects are not followed")
	require.Zero(t, target.count())
	require.NotNil(t, client.CheckRedirect, "the caller's client is not modified")
}

func TestWebhookConfigErrors(t *testing.T) {
	cases := []struct {
		name  string
		url   string
		sec   string
		opts  []alert.WebhookOption
		field string
	}{
		{"relative URL", "/hook", secret, nil, "URL"},
		{"ftp URL", "ftp://example.com/hook", secret, nil, "URL"},
		{"unparseable URL", "http://[::1", secret, nil, "URL"},
		{"empty secret", "https://example.com/hook", "", nil, "Secret"},
		{"zero attempts", "https://example.com/hook", secret, []alert.WebhookOption{alert.WithMaxAttempts(0)}, "MaxAttempts"},
		{"zero timeout", "https://example.com/hook", secret, []alert.WebhookOption{alert.WithTimeout(0)}, "Timeout"},
		{"backoff max below initial", "https://example.com/hook", secret, []alert.WebhookOption{alert.WithBackoff(time.Minute, time.Second)}, "Backoff"},
		{"negative retry-after cap", "https://example.com/hook", secret, []alert.WebhookOption{alert.WithMaxRetryAfter(-1)}, "MaxRetryAfter"},
		{"nil client", "https://example.com/hook", secret, []alert.WebhookOption{alert.WithHTTPClient(nil)}, "HTTPClient"},
		{"user agent with newline", "https://example.com/hook", secret, []alert.WebhookOption{alert.WithUserAgent("a\r\nX-Evil: 1")}, "UserAgent"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := alert.Webhook(c.url, c.sec, c.opts...).Deliver(context.Background(), sampleAlerts()[0])
			var cerr *alert.ConfigError
			require.ErrorAs(t, err, &cerr)
			require.Equal(t, c.field, cerr.Field)
			require.NotContains(t, err.Error(), secret)
		})
	}
}

func TestWebhookRefusesInvalidAlert(t *testing.T) {
	rc, srv := newReceiver(t, nil)
	a := sampleAlerts()[1]
	a.ID = ""
	require.ErrorIs(t, alert.Webhook(srv.URL, secret).Deliver(context.Background(), a), alert.ErrInvalid)
	require.Zero(t, rc.count())
}

func TestWebhookNeverLogsSecretOrURLPath(t *testing.T) {
	_, srv := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) bool {
		if n <= 2 {
			w.WriteHeader(http.StatusServiceUnavailable)
			return false
		}
		return true
	})
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	url := srv.URL + "/services/T000/B000/tok3n?sig=tok3n"
	s := alert.Webhook(url, secret, alert.WithClock(clock.NewAutoFake(t0)), alert.WithLogger(logger), alert.WithUserAgent("test-agent/2"))
	require.NoError(t, s.Deliver(context.Background(), sampleAlerts()[0]))
	require.Equal(t, 2, strings.Count(logs.String(), "alert: webhook retry"), logs.String())
	require.Contains(t, logs.String(), sampleAlerts()[0].ID)
	described := fmt.Sprintf("%v %+v %#v %s", s, s, s, s)
	slog.New(slog.NewJSONHandler(&logs, nil)).Info("sink", "sink", s)
	for _, out := range []string{logs.String(), described} {
		require.NotContains(t, out, secret)
		require.NotContains(t, out, "tok3n")
	}
	require.Contains(t, described, "alert.Webhook(http://127.0.0.1")
}

func TestWebhookUserAgent(t *testing.T) {
	var got []string
	var mu sync.Mutex
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Get("User-Agent"))
		mu.Unlock()
	}))
	defer srv.Close()
	a := sampleAlerts()[0]
	require.NoError(t, alert.Webhook(srv.URL, secret).Deliver(context.Background(), a))
	require.NoError(t, alert.Webhook(srv.URL, secret, alert.WithUserAgent("newsroom-bot/3")).Deliver(context.Background(), a))
	require.Equal(t, []string{alert.DefaultWebhookUserAgent, "newsroom-bot/3"}, got)
}

func TestWebhookConcurrentDeliveries(t *testing.T) {
	rc, srv := newReceiver(t, nil)
	s := alert.Webhook(srv.URL, secret)
	base := sampleAlerts()[1]
	const n = 32
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := base
			a.URL = fmt.Sprintf("https://example.com/%d", i)
			a.ID = alert.ID(a.URL, a.OldHash, a.NewHash)
			errs[i] = s.Deliver(context.Background(), a)
		}()
	}
	wg.Wait()
	require.NoError(t, errors.Join(errs...))
	require.Len(t, rc.delivered, n)
}

func TestVerifySignature(t *testing.T) {
	body := []byte(`{"id":"abc","kind":"changed"}`)
	m := hmac.New(sha256.New, []byte(secret))
	m.Write(body)
	good := "sha256=" + hex.EncodeToString(m.Sum(nil))
	cases := []struct {
		name   string
		secret string
		body   []byte
		header string
		want   bool
	}{
		{"valid", secret, body, good, true},
		{"surrounding spaces", secret, body, "  " + good + " ", true},
		{"uppercase hex", secret, body, "sha256=" + strings.ToUpper(good[7:]), true},
		{"wrong secret", "other", body, good, false},
		{"tampered body", secret, append([]byte(nil), append(body, ' ')...), good, false},
		{"empty secret", "", body, good, false},
		{"no prefix", secret, body, good[7:], false},
		{"other algorithm", secret, body, "sha1=" + good[7:], false},
		{"truncated", secret, body, good[:len(good)-2], false},
		{"not hex", secret, body, "sha256=" + strings.Repeat("zz", 32), false},
		{"empty", secret, body, "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, alert.VerifySignature(c.secret, c.body, c.header))
		})
	}
}
