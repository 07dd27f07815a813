package alert

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The large-input test in diff_test.go relies on the budget running out;
// pin that it does, so that test keeps covering the fallback.
func TestDiffBudgetRunsOutOnLargeDissimilarInput(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	gen := func(n int) []string {
		var sb strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&sb, "line %d\n", r.IntN(400))
		}
		return splitLines(sb.String())
	}
	a, b := gen(20000), gen(20000)
	ia, ib := intern(a, b)
	d := differ{a: ia, b: ib, delA: make([]bool, len(a)), insB: make([]bool, len(b)), budget: diffBudget}
	d.compare(0, len(a), 0, len(b))
	require.Negative(t, d.budget)

	small := differ{a: []int{1, 2, 3}, b: []int{1, 4, 3}, delA: make([]bool, 3), insB: make([]bool, 3), budget: diffBudget}
	small.compare(0, 3, 0, 3)
	require.Equal(t, []bool{false, true, false}, small.delA)
	require.Equal(t, []bool{false, true, false}, small.insB)
	require.Positive(t, small.budget)
}
