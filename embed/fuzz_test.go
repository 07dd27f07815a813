package embed_test

import (
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/recrawl/recrawl/embed"
)

// FuzzOpenAIResponse serves arbitrary bodies and statuses to the client: it
// must never panic, and it either fails with no vectors or returns exactly
// one finite vector of the configured length per input.
func FuzzOpenAIResponse(f *testing.F) {
	seeds := []struct {
		status int
		body   string
	}{
		{200, `{"data":[{"index":0,"embedding":[1,0,0,0]},{"index":1,"embedding":[0,1,0,0]}]}`},
		{200, `{"data":[{"index":1,"embedding":[1,0,0,0]},{"index":0,"embedding":[0,1,0,0]}]}`},
		{200, `{"data":[{"embedding":[1,0,0,0]},{"embedding":[0,1,0,0]}]}`},
		{200, `{"data":[{"index":0,"embedding":[1,0,0]}]}`},
		{200, `{"data":[{"index":0,"embedding":[1e39,0,0,0]},{"index":1,"embedding":[0,1,0,0]}]}`},
		{200, `{"data":null}`},
		{200, `[]`},
		{401, `{"error":{"message":"bad key","type":"invalid_request_error","code":"invalid_api_key"}}`},
		{400, `{"error":"plain"}`},
		{422, `{"error":{"code":42}}`},
		{500, `not json`},
	}
	for _, s := range seeds {
		f.Add(s.status, []byte(s.body))
	}
	var mu sync.Mutex
	var status int
	var body []byte
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		st, b := status, body
		mu.Unlock()
		w.WriteHeader(st)
		_, _ = w.Write(b)
	}))
	defer srv.Close()
	c, err := embed.NewOpenAI(embed.OpenAIConfig{BaseURL: srv.URL + "/v1", Model: "m", Dimensions: 4, MaxRetries: -1})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, st int, b []byte) {
		if st < 200 || st > 599 {
			st = 200 + (st%400+400)%400
		}
		mu.Lock()
		status, body = st, b
		mu.Unlock()
		vs, err := c.Embed(context.Background(), []string{"a", "b"})
		if err != nil {
			if vs != nil {
				t.Fatalf("vectors returned with error %v", err)
			}
			return
		}
		if len(vs) != 2 {
			t.Fatalf("got %d vectors for 2 inputs", len(vs))
		}
		for _, v := range vs {
			if len(v) != 4 {
				t.Fatalf("vector of length %d", len(v))
			}
			for _, x := range v {
				if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
					t.Fatalf("non-finite value %v", x)
				}
			}
		}
	})
}

// FuzzHashing: any text gives a vector of the right length that is unit
// length or zero, the same every time.
func FuzzHashing(f *testing.F) {
	for _, s := range []string{"", "hello world", "网页抓取", "\xff\xfe", "a\u0301b", "🙂 x 🙂"} {
		f.Add(s)
	}
	h, _ := embed.NewHashing(32)
	f.Fuzz(func(t *testing.T, s string) {
		vs, err := h.Embed(context.Background(), []string{s, s})
		if err != nil {
			t.Fatal(err)
		}
		if len(vs[0]) != 32 || !equalVectors(vs[:1], vs[1:]) {
			t.Fatal("wrong length or not deterministic")
		}
		n := norm(vs[0])
		if n != 0 && math.Abs(n-1) > 1e-5 {
			t.Fatalf("norm %v", n)
		}
	})
}
