package backend

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestTimeEncoding(t *testing.T) {
	tests := []struct {
		name string
		in   time.Time
		enc  int64
		out  time.Time
	}{
		{"zero", time.Time{}, math.MinInt64, time.Time{}},
		{"epoch", time.Unix(0, 0), 0, time.Unix(0, 0).UTC()},
		{"nanoseconds", time.Unix(1_700_000_000, 1), 1_700_000_000_000_000_001, time.Unix(1_700_000_000, 1).UTC()},
		{"before 1970", time.Date(1901, 1, 1, 0, 0, 0, 5, time.UTC), time.Date(1901, 1, 1, 0, 0, 0, 5, time.UTC).UnixNano(), time.Date(1901, 1, 1, 0, 0, 0, 5, time.UTC)},
		{"zone", time.Date(2025, 1, 1, 7, 0, 0, 0, time.FixedZone("+7", 7*3600)), time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano(), time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"year 1 clamps", time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC), math.MinInt64 + 1, time.Unix(0, math.MinInt64+1).UTC()},
		{"year 9999 clamps", time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), math.MaxInt64, time.Unix(0, math.MaxInt64).UTC()},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.enc, EncTime(tc.in))
			require.Equal(t, tc.out, DecTime(tc.enc))
		})
	}
	require.Less(t, EncTime(time.Time{}), EncTime(time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC)),
		"the zero time sorts before every clamped instant")
}
