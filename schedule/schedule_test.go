package schedule_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/schedule"
)

func TestHalving(t *testing.T) {
	day := 24 * time.Hour
	tests := []struct {
		name string
		h    schedule.Halving
		cur  time.Duration
		obs  schedule.Observation
		want time.Duration
	}{
		{"first fetch starts at one day", schedule.Halving{}, 0, schedule.Observation{First: true, Changed: true}, day},
		{"change halves", schedule.Halving{}, day, schedule.Observation{Changed: true}, 12 * time.Hour},
		{"no change grows by half", schedule.Halving{}, day, schedule.Observation{}, 36 * time.Hour},
		{"floor at one hour", schedule.Halving{}, 90 * time.Minute, schedule.Observation{Changed: true}, time.Hour},
		{"cap at thirty days", schedule.Halving{}, 25 * day, schedule.Observation{}, 30 * day},
		{"custom fields", schedule.Halving{Start: time.Hour, Min: time.Minute, Max: 2 * time.Hour, Grow: 3}, time.Hour, schedule.Observation{}, 2 * time.Hour},
		{"unknown interval restarts", schedule.Halving{}, 0, schedule.Observation{}, day},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := tc.h.Next(schedule.Page{Interval: tc.cur}, tc.obs)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestHalvingConvergesForStaticPage(t *testing.T) {
	var iv time.Duration
	h := schedule.DefaultHalving
	iv = h.Next(schedule.Page{}, schedule.Observation{First: true})
	for i := 0; i < 20; i++ {
		iv = h.Next(schedule.Page{Interval: iv}, schedule.Observation{})
	}
	require.Equal(t, 30*24*time.Hour, iv)
}
