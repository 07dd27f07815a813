package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/recrawl/recrawl/fetch"
)

// A bound in the context applies to every request sent on it; here a
// server that never answers.
func ExampleWithRequestTimeout() {
	stalled := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer stalled.Close()

	ctx := fetch.WithRequestTimeout(context.Background(), 100*time.Millisecond)
	bound, _ := fetch.RequestTimeout(ctx)
	_, err := (&fetch.HTTP{MaxAttempts: 1}).Fetch(ctx, fetch.Request{URL: stalled.URL})
	var te *fetch.TimeoutError
	fmt.Println(bound, errors.As(err, &te), te.After)
	// Output: 100ms true 100ms
}
