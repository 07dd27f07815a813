package clock_test

import (
	"context"
	"fmt"
	"time"

	"github.com/recrawl/recrawl/clock"
)

// A fake clock lets a test wait "one hour" without sleeping.
func ExampleNewFake() {
	start := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	c := clock.NewFake(start)
	done := make(chan error)
	go func() { done <- clock.Sleep(context.Background(), c, time.Hour) }()

	_ = c.BlockUntil(context.Background(), 1) // the sleeper is waiting
	c.Advance(time.Hour)
	fmt.Println(<-done, c.Now().Format(time.Kitchen))
	// Output: <nil> 10:00AM
}

// An auto-advancing clock makes every wait instantaneous while Now still
// records the time that would have passed.
func ExampleNewAutoFake() {
	c := clock.NewAutoFake(time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC))
	_ = clock.Sleep(context.Background(), c, 90*time.Second)
	fmt.Println(c.Now().Format(time.TimeOnly))
	// Output: 09:01:30
}
