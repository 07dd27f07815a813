package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMeasuresBothPolicies(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run([]string{"-pages", "40", "-warmup", "3", "-days", "3", "-cadence", "6h", "-json"}, &out))
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	require.Len(t, lines, 2)
	var rs []Result
	for _, l := range lines {
		var r Result
		require.NoError(t, json.Unmarshal([]byte(l), &r))
		require.Greater(t, r.Freshness, 0.3, r.Policy)
		require.LessOrEqual(t, r.Freshness, 1.0, r.Policy)
		require.Positive(t, r.Fetches, r.Policy)
		require.Equal(t, 40, r.Pages)
		rs = append(rs, r)
	}
	require.Equal(t, "halving", rs[0].Policy)
	require.Equal(t, "default", rs[1].Policy)
	require.InDelta(t, float64(rs[1].Fetches)/float64(rs[0].Fetches), rs[1].FetchRate, 1e-9)
}

func TestRejectsBadFlags(t *testing.T) {
	var out bytes.Buffer
	require.Error(t, run([]string{"-pages", "0"}, &out))
	require.Error(t, run([]string{"-cadence", "1s"}, &out))
	require.Error(t, run([]string{"-nope"}, &out))
}

// TestSameOutputTwice pins that a run of the program can be repeated: the
// site has a fixed host name, so the URLs, and the jitter of every revisit
// (a hash of the URL), do not change with the loopback port.
func TestSameOutputTwice(t *testing.T) {
	args := []string{"-pages", "60", "-warmup", "8", "-days", "8", "-cadence", "6h", "-json"}
	var first, second bytes.Buffer
	require.NoError(t, run(args, &first))
	require.NoError(t, run(args, &second))
	require.Equal(t, first.String(), second.String())
}
