package backend

import (
	"encoding/binary"
	"fmt"
	"math"
)

// EncodeVector is how the SQL stores keep an embedding vector: its
// float32s, little-endian IEEE 754.
func EncodeVector(v []float32) []byte {
	buf := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(f))
	}
	return buf
}

// DecodeVector is the inverse of EncodeVector. A stored vector is never
// empty (PutVectors refuses one), so no bytes are corrupt too.
func DecodeVector(b []byte) ([]float32, error) {
	if len(b) == 0 || len(b)%4 != 0 {
		return nil, fmt.Errorf("%w: a vector of %d bytes is not a whole, positive number of float32s", ErrCorrupt, len(b))
	}
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v, nil
}
