package sqlite_test

import (
	"context"
	"fmt"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/sqlite"
)

// A planner lists every live row of a source with the columns it reads,
// a page at a time.
func ExampleState_PlanRows() {
	st, err := sqlite.Open(context.Background(), ":memory:")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	ctx := context.Background()
	now := time.Date(2025, time.March, 1, 9, 0, 0, 0, time.UTC)
	_, err = st.UpsertDiscovered(ctx, "docs", now, []crawlstate.Discovered{
		{URL: "https://example.com/a"}, {URL: "https://example.com/b"}, {URL: "https://example.com/c"},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	var pl crawlstate.PlanLister = st
	for after := ""; ; {
		rows, err := pl.PlanRows(ctx, "docs", after, 2)
		if err != nil {
			fmt.Println(err)
			return
		}
		for _, r := range rows {
			fmt.Println(r.URL, r.Visits)
		}
		if len(rows) < 2 {
			break
		}
		after = rows[len(rows)-1].URL
	}
	// Output:
	// https://example.com/a 0
	// https://example.com/b 0
	// https://example.com/c 0
}
