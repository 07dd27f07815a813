package peakheap_test

import (
	"runtime"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/internal/peakheap"
)

var sink []byte

func TestMeasure(t *testing.T) {
	const size = 64 << 20
	peak := peakheap.Measure(func() {
		sink = make([]byte, size)
		for i := range sink {
			sink[i] = byte(i)
		}
		sink = nil
	})
	require.GreaterOrEqual(t, peak, uint64(size), "the buffer was live")
	require.Less(t, peak, uint64(2*size))
	runtime.GC()
	require.Less(t, peakheap.Measure(func() {}), uint64(size/4), "nothing allocated")
}
