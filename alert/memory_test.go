package alert_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/internal/peakheap"
)

// dissimilarLines is n lines drawn from 400 distinct ones: two such texts
// share many lines in no useful order, the worst case for a line diff.
func dissimilarLines(r *rand.Rand, n int) string {
	var sb strings.Builder
	for range n {
		fmt.Fprintf(&sb, "line %d\n", r.IntN(400))
	}
	return sb.String()
}

// Two 2.1 MiB texts that differ everywhere: the diff stays correct and its
// peak heap stays a fixed multiple of the input (the output alone is about
// the size of both texts). go-udiff peaks at 14-19x (its line lists grow
// by appending; the hand-written diff before it peaked at 10x).
func TestDiffPeakHeapOnLargeDissimilarInput(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	old, new := dissimilarLines(r, 250_000), dissimilarLines(r, 250_000)
	in := len(old) + len(new)
	var d string
	peak := peakheap.Measure(func() { d = alert.Diff(old, new, 3) })
	ratio := float64(peak) / float64(in)
	t.Logf("input %.1f MiB, diff %.1f MiB: peak heap %.1f MiB, %.1fx the input", float64(in)/(1<<20), float64(len(d))/(1<<20), float64(peak)/(1<<20), ratio)
	require.LessOrEqual(t, ratio, 24.0, "peak heap %.1fx the input", ratio)
	back, err := applyPatch(old, d)
	require.NoError(t, err)
	require.Equal(t, new, back)
}
