package pgvector

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseVector feeds parseVector, the reader of pgvector's text form,
// arbitrary text: it returns a vector or an error, never panics, and a
// vector it read writes back (vectorText) as text it reads to the same
// float32 bits.
func FuzzParseVector(f *testing.F) {
	for _, s := range []string{"[1,2,3]", "[]", "[-0.5,1e-45,3.4028235e+38]", "[1,,2]", "[NaN]", "[1 , 2]", "1,2", "[0x1p-2]", "["} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := parseVector(s)
		if err != nil {
			return
		}
		again, err := parseVector(vectorText(v))
		require.NoError(t, err, "reading back %q", vectorText(v))
		require.Len(t, again, len(v))
		for i := range v {
			require.Equal(t, math.Float32bits(v[i]), math.Float32bits(again[i]), "element %d of %q", i, s)
		}
	})
}
