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
