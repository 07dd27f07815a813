package backend

import (
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVectorEncoding(t *testing.T) {
	in := []float32{0, -0.5, math.MaxFloat32, float32(math.Inf(1)), math.SmallestNonzeroFloat32}
	b := EncodeVector(in)
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0, 0xbf}, b[:8], "little-endian IEEE 754")
	got, err := DecodeVector(b)
	require.NoError(t, err)
	require.Equal(t, in, got)
	nan := math.Float32frombits(0x7fc00001)
	got, err = DecodeVector(EncodeVector([]float32{nan}))
	require.NoError(t, err)
	require.Equal(t, uint32(0x7fc00001), math.Float32bits(got[0]), "bits are kept, NaN payloads too")

	for _, bad := range [][]byte{{1, 2, 3}, {}, nil} {
		_, err = DecodeVector(bad)
		require.ErrorIs(t, err, ErrCorrupt, "%x", bad)
	}
}

func FuzzDecodeVector(f *testing.F) {
	f.Add([]byte{})
	f.Add(EncodeVector([]float32{1, -2, 3.5}))
	f.Add([]byte{1, 2, 3, 4, 5})
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := DecodeVector(b)
		if err != nil {
			require.ErrorIs(t, err, ErrCorrupt)
			require.True(t, len(b) == 0 || len(b)%4 != 0, "only no bytes or a partial float32 is corrupt")
			return
		}
		require.Equal(t, b, EncodeVector(v), "every whole number of float32s decodes and re-encodes to itself")
	})
}
