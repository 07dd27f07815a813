package sqlitevec

import (
	"crypto/sha256"
	"encoding/binary"
	"math/bits"
)

// signatureVersion names how signatures are made; it is stored in the
// file, and a file whose signatures were made otherwise is refused.
const signatureVersion = "rht2-v1"

// signer makes the binary signature of a vector that the coarse search
// compares: the signs of the vector after a fixed pseudo-random rotation,
// one bit per coordinate of the rotated vector. Two vectors at angle θ
// differ in a fraction of about θ/π of their bits (random-hyperplane
// hashing), so the Hamming distance between signatures ranks records as
// their cosine does, roughly, for vectors dense or sparse; the exact
// cosine then reranks the candidates.
//
// The rotation is two rounds of a random sign flip followed by the
// Walsh–Hadamard transform, on the vector zero-padded to a power of two
// of at least 8 coordinates (sqlite-vec's bit vectors come in bytes):
// O(n log n) per vector. The signs come from SHA-256 of a fixed label, so
// every process, machine and version computes the same signatures.
type signer struct {
	dims, width int        // width: the padded length, the signature's bits
	flips       [2][]uint8 // per round, 1 where the coordinate is negated
}

func newSigner(dims int) *signer {
	width := 8
	for width < dims {
		width *= 2
	}
	s := &signer{dims: dims, width: width}
	for round := range s.flips {
		f := make([]uint8, width)
		var block [sha256.Size]byte
		for i := range f {
			if i%(8*sha256.Size) == 0 {
				var label [16]byte
				copy(label[:], "sqlitevec rht")
				label[13] = byte(round)
				binary.LittleEndian.PutUint16(label[14:], uint16(i/(8*sha256.Size)))
				block = sha256.Sum256(label[:])
			}
			bit := i % (8 * sha256.Size)
			f[i] = block[bit/8] >> (bit % 8) & 1
		}
		s.flips[round] = f
	}
	return s
}

// bytes is the length of a signature.
func (s *signer) bytes() int { return s.width / 8 }

// sign returns v's signature: bit i (of byte i/8, least significant bit
// first, as sqlite-vec's vec_bit reads it) is set when coordinate i of the
// rotated vector is positive. A zero vector has the zero signature.
func (s *signer) sign(v []float32) []byte {
	x := make([]float64, s.width)
	for i, f := range v[:min(len(v), s.dims)] {
		x[i] = float64(f)
	}
	for _, f := range s.flips {
		for i, neg := range f {
			if neg == 1 {
				x[i] = -x[i]
			}
		}
		hadamard(x)
	}
	out := make([]byte, s.bytes())
	for i, c := range x {
		if c > 0 {
			out[i/8] |= 1 << (i % 8)
		}
	}
	return out
}

// hadamard applies the (unnormalised) Walsh–Hadamard transform to x in
// place; len(x) is a power of two.
func hadamard(x []float64) {
	for h := 1; h < len(x); h *= 2 {
		for i := 0; i < len(x); i += 2 * h {
			for j := i; j < i+h; j++ {
				a, b := x[j], x[j+h]
				x[j], x[j+h] = a+b, a-b
			}
		}
	}
}

// hamming is the number of bits in which a and b differ (tests compare it
// with what sqlite-vec computes).
func hamming(a, b []byte) int {
	n := 0
	for i := range a {
		n += bits.OnesCount8(a[i] ^ b[i])
	}
	return n
}
