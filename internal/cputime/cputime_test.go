//go:build unix

package cputime_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/internal/cputime"
)

var sink uint64

// Busy work shows up as CPU time; sleeping does not.
func TestProcess(t *testing.T) {
	c0 := cputime.Process()
	for i := range uint64(200_000_000) {
		sink += i * i
	}
	busy := cputime.Process() - c0
	require.Greater(t, busy, 10*time.Millisecond)
	c1 := cputime.Process()
	time.Sleep(200 * time.Millisecond)
	require.Less(t, cputime.Process()-c1, 100*time.Millisecond)
}
