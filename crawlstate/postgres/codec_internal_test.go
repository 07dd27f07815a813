package postgres

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
)

// Checks round-trip, co-change chances included to the state's
// resolution; a check stored before chances were kept (changed as 0 or
// 1) reads as having none.
func TestChecksRoundTrip(t *testing.T) {
	in := []crawlstate.Check{
		{Elapsed: 20 * time.Hour, Changed: true, Modified: 3 * time.Hour},
		{Elapsed: time.Hour, CoChance: 1},
		{Elapsed: 2 * time.Hour, Changed: true, CoChance: 40.0 / crawlstate.CoChanceSteps},
	}
	b := encodeChecks(in)
	require.Len(t, b, 3*checkSize)
	got, err := decodeChecks(b)
	require.NoError(t, err)
	require.Equal(t, in, got)

	old := append(appendInt64(appendInt64(nil, int64(time.Hour)), 0), 1)
	got, err = decodeChecks(old)
	require.NoError(t, err)
	require.Equal(t, []crawlstate.Check{{Elapsed: time.Hour, Changed: true}}, got)

	_, err = decodeChecks(old[:5])
	require.ErrorIs(t, err, backend.ErrCorrupt)
}

func FuzzDecodeChecks(f *testing.F) {
	f.Add([]byte(nil))
	f.Add(encodeChecks([]crawlstate.Check{{Elapsed: time.Hour, Changed: true, Modified: time.Minute, CoChance: 0.5}}))
	f.Add(make([]byte, checkSize+1))
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, err := decodeChecks(b)
		if err != nil {
			require.ErrorIs(t, err, backend.ErrCorrupt)
			return
		}
		for _, c := range cs {
			require.True(t, c.CoChance >= 0 && c.CoChance <= 1, "co-change chance %v", c.CoChance)
		}
		again, err := decodeChecks(encodeChecks(cs))
		require.NoError(t, err)
		if len(cs) == 0 {
			require.Empty(t, again)
			return
		}
		require.Equal(t, cs, again)
	})
}
