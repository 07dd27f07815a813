package recrawl

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
)

// pagedRows lists n rows named r000, r001, ... a page at a time, as a
// state's listers do, counting the pages it was asked for; failAt, when
// positive, makes the page after that many rows fail.
type pagedRows struct {
	n, failAt int
	calls     atomic.Int32
}

func (p *pagedRows) list(ctx context.Context, after string, size int) ([]crawlstate.Row, error) {
	p.calls.Add(1)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var out []crawlstate.Row
	for i := range p.n {
		u := fmt.Sprintf("r%03d", i)
		if u <= after {
			continue
		}
		if p.failAt > 0 && i >= p.failAt {
			return nil, errors.New("disk on fire")
		}
		out = append(out, crawlstate.Row{URL: u})
		if len(out) == size {
			break
		}
	}
	return out, nil
}

func TestReadAhead(t *testing.T) {
	ctx := context.Background()
	read := func(p *pagedRows, size, most int) ([]string, error) {
		next, stop := readAhead(ctx, size, "", func(ctx context.Context, after string) ([]crawlstate.Row, error) {
			return p.list(ctx, after, size)
		})
		defer stop()
		var urls []string
		for len(urls) < most {
			rows, err := next()
			if err != nil {
				return urls, err
			}
			for _, r := range rows {
				urls = append(urls, r.URL)
			}
			if len(rows) < size {
				break
			}
		}
		return urls, nil
	}
	t.Run("every row in order", func(t *testing.T) {
		for _, n := range []int{0, 1, 9, 10, 11, 35} {
			p := &pagedRows{n: n}
			urls, err := read(p, 5, 1000)
			require.NoError(t, err)
			require.Len(t, urls, n)
			for i, u := range urls {
				require.Equal(t, fmt.Sprintf("r%03d", i), u)
			}
			require.EqualValues(t, n/5+1, p.calls.Load(), "%d rows: one list per page and the short one", n)
		}
	})
	t.Run("an error ends the pages", func(t *testing.T) {
		p := &pagedRows{n: 30, failAt: 12}
		urls, err := read(p, 5, 1000)
		require.ErrorContains(t, err, "disk on fire")
		require.Len(t, urls, 10)
		require.EqualValues(t, 3, p.calls.Load())
	})
	t.Run("stop ends the reading ahead", func(t *testing.T) {
		p := &pagedRows{n: 1000}
		urls, err := read(p, 5, 7) // two pages taken
		require.NoError(t, err)
		require.Len(t, urls, 10)
		require.LessOrEqual(t, p.calls.Load(), int32(4), "at most one page read ahead and one refused")
	})
	t.Run("a cancelled context", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		next, stop := readAhead(cctx, 5, "", func(ctx context.Context, after string) ([]crawlstate.Row, error) {
			return (&pagedRows{n: 100}).list(ctx, after, 5)
		})
		defer stop()
		_, err := next()
		require.ErrorIs(t, err, context.Canceled)
		stop()
		stop() // twice is allowed
	})
}
