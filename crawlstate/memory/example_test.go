package memory_test

import (
	"context"
	"errors"
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

// Workers share a source through the Sharer calls: the leader offers the
// run's rows under the run lock, workers claim them under a lease, and a
// write fenced by the lease (Result.Lease) is refused once another worker
// took the row over.
func ExampleState_Renew() {
	ctx := context.Background()
	s := memory.New(crawlstate.Options{})
	run := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	const page = "https://docs.example.com/guide"
	_, _ = s.UpsertDiscovered(ctx, "docs", run, []crawlstate.Discovered{{URL: page}})

	_ = s.Lock(ctx, "docs", "leader", run, time.Minute)
	n, _ := s.Offer(ctx, "docs", run, "leader", []string{page})
	_ = s.Unlock(ctx, "docs", "leader")
	fmt.Println("offered:", n)

	rows, _, _, _ := s.Claim(ctx, "docs", run, "A", run, time.Minute, 10)
	fmt.Println("A claims:", len(rows))
	// A is paused past its lease; B takes the row over.
	later := run.Add(2 * time.Minute)
	rows, _, _, _ = s.Claim(ctx, "docs", run, "B", later, time.Minute, 10)
	fmt.Println("B claims:", len(rows))

	held, _ := s.Renew(ctx, "docs", "A", []string{page}, later, time.Minute)
	fmt.Println("A still holds:", len(held))
	err := s.Record(ctx, "docs", []crawlstate.Result{{URL: page, At: later, Lease: "A"}})
	fmt.Println("A's record lost:", errors.Is(err, crawlstate.ErrLeaseLost))
	err = s.Record(ctx, "docs", []crawlstate.Result{{URL: page, At: later, Lease: "B"}})
	fmt.Println("B's record:", err)
	// Output:
	// offered: 1
	// A claims: 1
	// B claims: 1
	// A still holds: 0
	// A's record lost: true
	// B's record: <nil>
}
