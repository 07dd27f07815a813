package memory_test

import (
	"context"
	"fmt"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/memory"
)

// Discover two pages, fetch one, and see what is due.
func ExampleNew() {
	ctx := context.Background()
	s := memory.New(crawlstate.Options{})
	defer s.Close()

	now := time.Date(2025, time.March, 1, 12, 0, 0, 0, time.UTC)
	st, err := s.UpsertDiscovered(ctx, "docs", now, []crawlstate.Discovered{
		{URL: "https://example.com/a"}, {URL: "https://example.com/b"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	due, err := s.Due(ctx, "docs", now, crawlstate.Key{}, 100)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(st.New, "new,", len(due), "due")

	// a answers 200; it is due again in a day.
	err = s.Record(ctx, "docs", []crawlstate.Result{{
		URL: "https://example.com/a", At: now, Changed: true, ContentHash: "h1",
		Interval: 24 * time.Hour, NextCheck: now.Add(24 * time.Hour),
	}})
	if err != nil {
		fmt.Println(err)
		return
	}
	due, err = s.Due(ctx, "docs", now, crawlstate.Key{}, 100)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(len(due), "due:", due[0].URL)
	// Output:
	// 2 new, 2 due
	// 1 due: https://example.com/b
}
