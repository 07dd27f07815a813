package alert_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"time"

	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/clock"
)

// The same change always gets the same ID, however often it is delivered.
func ExampleID() {
	id := alert.ID("https://docs.example.com/guide", "9f2c1e0b", "1b2c3d4e")
	fmt.Println(len(id), id == alert.ID("https://docs.example.com/guide", "9f2c1e0b", "1b2c3d4e"))
	fmt.Println(alert.ID("u", "o", "n"))
	// Output:
	// 64 true
	// fa80d2b14e21b7f3d76246311a8167287a957ee32a84916f091ac2ea930183aa
}

func ExampleAlert_Validate() {
	a := alert.Alert{Kind: alert.Changed, URL: "https://docs.example.com/guide", OldHash: "9f2c", NewHash: "1b2c"}
	fmt.Println(errors.Is(a.Validate(), alert.ErrInvalid))
	a.ID = alert.ID(a.URL, a.OldHash, a.NewHash)
	fmt.Println(a.Validate())
	// Output:
	// true
	// <nil>
}

func ExampleDiff() {
	old := "# Pricing\nThe plan costs 10 EUR.\nBilled monthly.\n"
	new := "# Pricing\nThe plan costs 12 EUR.\nBilled monthly.\n"
	fmt.Print(alert.Diff(old, new, 1))
	// Output:
	// --- old
	// +++ new
	// @@ -1,3 +1,3 @@
	//  # Pricing
	// -The plan costs 10 EUR.
	// +The plan costs 12 EUR.
	//  Billed monthly.
}

func ExampleUnifiedDiff() {
	fmt.Print(alert.UnifiedDiff("a/guide.md", "b/guide.md", "Install with go get.", "Install with go get.\nThen run it.\n", 3))
	// Output:
	// --- a/guide.md
	// +++ b/guide.md
	// @@ -1 +1,2 @@
	// -Install with go get.
	// \ No newline at end of file
	// +Install with go get.
	// +Then run it.
}

func ExampleJSONL() {
	sink := alert.JSONL(os.Stdout)
	url := "https://docs.example.com/guide"
	a := alert.Alert{
		ID:         alert.ID(url, "", "1b2c"),
		Kind:       alert.New,
		Source:     "docs",
		URL:        url,
		NewHash:    "1b2c",
		DetectedAt: time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC),
	}
	if err := sink.Deliver(context.Background(), a); err != nil {
		fmt.Println("not acknowledged:", err)
	}
	// Output:
	// {"id":"5f72e7105fb2ce098a24a0ce2ab50d43f7d6a1e9962dc4a94a29f719cd7bd4b6","kind":"new","source":"docs","url":"https://docs.example.com/guide","old_hash":"","new_hash":"1b2c","detected_at":"2026-03-02T09:30:00Z"}
}

// A receiver checks the signature on the raw body and deduplicates by the
// Idempotency-Key; the sender retries a 503 after the Retry-After it asked
// for, on a clock that needs no real waiting.
func ExampleWebhook() {
	const secret = "shared-secret"
	var mu sync.Mutex
	seen := map[string]bool{}
	busy := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !alert.VerifySignature(secret, body, r.Header.Get(alert.SignatureHeader)) {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if busy {
			busy = false
			w.Header().Set("Retry-After", "3")
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		key := r.Header.Get(alert.IdempotencyHeader)
		if !seen[key] {
			seen[key] = true
			var a alert.Alert
			_ = json.Unmarshal(body, &a)
			fmt.Println("notify editor:", a.Kind, a.URL)
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()

	start := time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)
	clk := clock.NewAutoFake(start)
	sink := alert.Webhook(srv.URL+"/hooks/recrawl", secret,
		alert.WithClock(clk),
		alert.WithMaxAttempts(3),
		alert.WithTimeout(10*time.Second),
	)
	url := "https://docs.example.com/guide"
	a := alert.Alert{ID: alert.ID(url, "9f2c", "1b2c"), Kind: alert.Changed, URL: url, OldHash: "9f2c", NewHash: "1b2c"}
	fmt.Println(sink.Deliver(context.Background(), a), clk.Now().Sub(start))
	// A redelivery (say, after a crash) does not notify twice.
	fmt.Println(sink.Deliver(context.Background(), a))
	// Output:
	// notify editor: changed https://docs.example.com/guide
	// <nil> 3s
	// <nil>
}

// A 4xx answer other than 408 and 429 is permanent: it is not retried.
func ExampleWebhookError() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "unknown field", http.StatusUnprocessableEntity)
	}))
	defer srv.Close()
	url := "https://docs.example.com/guide"
	a := alert.Alert{ID: alert.ID(url, "9f2c", ""), Kind: alert.Removed, URL: url, OldHash: "9f2c"}
	err := alert.Webhook(srv.URL, "shared-secret").Deliver(context.Background(), a)
	var werr *alert.WebhookError
	if errors.As(err, &werr) {
		fmt.Println(werr.Status, werr.Temporary(), werr.Body)
	}
	// Output: 422 false unknown field
}

func ExampleVerifySignature() {
	body := []byte(`{"id":"5e1f","kind":"changed"}`)
	// From: printf '{"id":"5e1f","kind":"changed"}' | openssl dgst -sha256 -hmac shared-secret
	header := "sha256=9b189d5d62b4328f34f23670dc2ca1d426c608c0d2698c455ebcb5004d7c0b2a"
	fmt.Println(alert.VerifySignature("shared-secret", body, header))
	fmt.Println(alert.VerifySignature("shared-secret", body, "sha256=deadbeef"))
	// Output:
	// true
	// false
}

func ExampleFunc() {
	sink := alert.Func(func(_ context.Context, a alert.Alert) error {
		fmt.Println(a.Kind, a.URL)
		return nil // acknowledged
	})
	url := "https://docs.example.com/old"
	_ = sink.Deliver(context.Background(), alert.Alert{ID: alert.ID(url, "9f2c", ""), Kind: alert.Removed, URL: url, OldHash: "9f2c"})
	// Output: removed https://docs.example.com/old
}

// Multi acknowledges only when every sink did; on redelivery in the same
// process it skips the sinks that already acknowledged.
func ExampleMulti() {
	var calls int
	down := true
	log := alert.Func(func(context.Context, alert.Alert) error { calls++; return nil })
	pager := alert.Func(func(context.Context, alert.Alert) error {
		if down {
			return errors.New("pager unavailable")
		}
		return nil
	})
	sink := alert.Multi(log, pager)
	url := "https://docs.example.com/guide"
	a := alert.Alert{ID: alert.ID(url, "9f2c", "1b2c"), Kind: alert.Changed, URL: url, OldHash: "9f2c", NewHash: "1b2c"}
	fmt.Println(sink.Deliver(context.Background(), a))
	down = false
	fmt.Println(sink.Deliver(context.Background(), a), calls)
	// Output:
	// alert: multi: sink 2 of 2: pager unavailable
	// <nil> 1
}
