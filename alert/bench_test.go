package alert_test

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recrawl/recrawl/alert"
)

func BenchmarkID(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = alert.ID("https://docs.example.com/zh/pipeline", hashA, hashB)
	}
}

func BenchmarkDiff(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("testdata", "corpus", "realworld_anthropic.txt"))
	if err != nil {
		b.Fatal(err)
	}
	doc := string(raw)
	r := rand.New(rand.NewPCG(1, 1))
	chunkOld := "## 增量抓取\n\nThe crawler refetches every page nightly.\nIt keeps ETags.\n"
	chunkNew := "## 增量抓取\n\nThe crawler refetches only pages that changed.\nIt keeps ETags.\n"
	var big strings.Builder
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&big, "line %d\n", r.IntN(300))
	}
	var big2 strings.Builder
	for i := 0; i < 5000; i++ {
		fmt.Fprintf(&big2, "line %d\n", r.IntN(300))
	}
	cases := []struct{ name, old, new string }{
		{"chunk", chunkOld, chunkNew},
		{"page 30KB 5 edits", doc, editLines(r, doc, 5)},
		{"page 30KB 100 edits", doc, editLines(r, doc, 100)},
		{"5000 dissimilar lines", big.String(), big2.String()},
		{"250000 dissimilar lines", dissimilarLines(r, 250_000), dissimilarLines(r, 250_000)},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.old) + len(c.new)))
			for b.Loop() {
				_ = alert.Diff(c.old, c.new, 3)
			}
		})
	}
}

func BenchmarkJSONL(b *testing.B) {
	s := alert.JSONL(io.Discard)
	a := sampleAlerts()[1]
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Deliver(context.Background(), a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkWebhookLoopback(b *testing.B) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if !alert.VerifySignature(secret, body, r.Header.Get(alert.SignatureHeader)) {
			w.WriteHeader(http.StatusUnauthorized)
		}
	}))
	defer srv.Close()
	s := alert.Webhook(srv.URL, secret)
	a := sampleAlerts()[1]
	b.ReportAllocs()
	for b.Loop() {
		if err := s.Deliver(context.Background(), a); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkVerifySignature(b *testing.B) {
	body := []byte(strings.Repeat(`{"id":"x","diff":"--- old\n+++ new\n"}`, 50))
	header := "sha256=" + strings.Repeat("0", 64)
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		_ = alert.VerifySignature(secret, body, header)
	}
}
