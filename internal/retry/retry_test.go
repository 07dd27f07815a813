package retry_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/internal/retry"
)

func TestAfter(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		name  string
		v     string
		limit time.Duration
		want  time.Duration
		ok    bool
	}{
		{"absent", "", 0, 0, false},
		{"seconds", " 7 ", 0, 7 * time.Second, true},
		{"zero", "0", 0, 0, true},
		{"negative", "-3", 0, 0, false},
		{"garbage", "soon", 0, 0, false},
		{"imf date", now.Add(90 * time.Second).Format(http.TimeFormat), 0, 90 * time.Second, true},
		{"rfc850 date", now.Add(30 * time.Second).Format("Monday, 02-Jan-06 15:04:05 GMT"), 0, 30 * time.Second, true},
		{"ansi c date", now.Add(time.Minute).Format(time.ANSIC), 0, time.Minute, true},
		{"date in the past", now.Add(-time.Hour).Format(http.TimeFormat), 0, 0, true},
		{"capped", "864000", time.Minute, time.Minute, true},
		{"huge seconds do not overflow", "99999999999999999", 0, 365 * 24 * time.Hour, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d, ok := retry.After(tc.v, now, tc.limit)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, d)
		})
	}
}

func TestBackoffIsBoundedFullJitter(t *testing.T) {
	for n := 0; n < 80; n++ {
		for range 50 {
			d := retry.Backoff(n, time.Second, 30*time.Second)
			require.GreaterOrEqual(t, d, time.Duration(0))
			ceiling := 30 * time.Second
			if n < 5 {
				ceiling = time.Second << n
			}
			require.LessOrEqual(t, d, ceiling)
		}
	}
	require.Zero(t, retry.Backoff(3, 0, 0))
}

func TestExp(t *testing.T) {
	tests := []struct {
		name          string
		n             int
		base, ceiling time.Duration
		want          time.Duration
	}{
		{"first step", 0, time.Second, time.Minute, time.Second},
		{"doubles", 3, time.Second, time.Minute, 8 * time.Second},
		{"capped", 6, time.Second, time.Minute, time.Minute},
		{"exactly the ceiling", 2, time.Second, 4 * time.Second, 4 * time.Second},
		{"shift past 62 is the ceiling", 80, time.Second, time.Minute, time.Minute},
		{"overflowing shift is the ceiling", 40, time.Hour, 24 * time.Hour, 24 * time.Hour},
		{"negative n is the ceiling", -1, time.Second, time.Minute, time.Minute},
		{"no base is the ceiling", 2, 0, time.Minute, time.Minute},
		{"no ceiling is zero", 2, time.Second, 0, 0},
		{"negative ceiling is zero", 2, time.Second, -time.Second, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, retry.Exp(tc.n, tc.base, tc.ceiling))
		})
	}
}

func TestHalfJitterStaysInTheUpperHalf(t *testing.T) {
	for n := 0; n < 80; n++ {
		d := retry.Exp(n, time.Second, 30*time.Second)
		lo, hi := d, time.Duration(0)
		for range 200 {
			w := retry.HalfJitter(n, time.Second, 30*time.Second)
			require.GreaterOrEqual(t, w, d/2)
			require.LessOrEqual(t, w, d)
			lo, hi = min(lo, w), max(hi, w)
		}
		// 200 uniform draws reach both ends of the half.
		require.Less(t, lo, d/2+d/10, "n %d", n)
		require.Greater(t, hi, d-d/10, "n %d", n)
	}
	require.Zero(t, retry.HalfJitter(3, time.Second, 0))
	// time.Hour<<40 overflows: the step is the ceiling.
	w := retry.HalfJitter(40, time.Hour, 12*time.Hour)
	require.GreaterOrEqual(t, w, 6*time.Hour)
	require.LessOrEqual(t, w, 12*time.Hour)
}

func FuzzAfter(f *testing.F) {
	for _, s := range []string{"", "7", "-1", "Wed, 21 Oct 2015 07:28:00 GMT", "99999999999999999999"} {
		f.Add(s)
	}
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, v string) {
		d, ok := retry.After(v, now, time.Hour)
		if d < 0 || d > time.Hour || (!ok && d != 0) {
			t.Fatalf("After(%q) = %v, %v", v, d, ok)
		}
	})
}
