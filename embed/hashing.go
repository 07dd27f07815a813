package embed

import (
	"context"
	"fmt"
	"math"
	"unicode"
	"unicode/utf8"
)

// DefaultHashingDimensions is the vector length of a zero Hashing.
const DefaultHashingDimensions = 384

// MaxDimensions is the largest vector length the embedders here accept.
const MaxDimensions = 1 << 16

// hashingVersion changes whenever Hashing would map a text differently.
const hashingVersion = "hashing-v1"

// Hashing is the offline embedder: signed feature hashing of lowercased
// word unigrams and bigrams, L2-normalized.
//
// A token is a run of Unicode letters, digits and combining marks; each Han,
// Hiragana or Katakana character is a token of its own, so Chinese and
// Japanese text yields character unigrams and bigrams. Every feature is
// hashed (FNV-1a, then mixed) to a coordinate and a sign. A text without
// letters or digits maps to the zero vector.
//
// The vectors are lexical: they measure shared words, not meaning. They are
// deterministic across runs, machines and Go versions, so they can be stored
// and compared later. The zero value uses DefaultHashingDimensions; Hashing
// is safe for concurrent use.
type Hashing struct {
	dims int
}

// NewHashing returns a Hashing embedder with dims dimensions; 0 selects
// DefaultHashingDimensions. It rejects dims outside 0..MaxDimensions.
func NewHashing(dims int) (*Hashing, error) {
	if dims < 0 || dims > MaxDimensions {
		return nil, &ConfigError{Field: "dims", Reason: fmt.Sprintf("%d is outside 1..%d (0 selects %d)", dims, MaxDimensions, DefaultHashingDimensions)}
	}
	return &Hashing{dims: dims}, nil
}

// Dimensions returns the vector length.
func (h *Hashing) Dimensions() int {
	if h == nil || h.dims == 0 {
		return DefaultHashingDimensions
	}
	return h.dims
}

// Model returns the algorithm, its version and the dimensions, for example
// "hashing-v1-384".
func (h *Hashing) Model() string { return fmt.Sprintf("%s-%d", hashingVersion, h.Dimensions()) }

// Embed returns one vector per text. It fails only when ctx is done.
func (h *Hashing) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	dims := h.Dimensions()
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = hashText(t, dims)
	}
	return out, nil
}

// FNV-1a 64-bit parameters.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// hashText builds the vector of one text.
func hashText(s string, dims int) []float32 {
	v := make([]float32, dims)
	var prev, cur uint64 // FNV-1a states of the previous and current token
	havePrev, inTok := false, false
	var buf [utf8.UTFMax]byte

	flush := func() {
		if !inTok {
			return
		}
		add(v, cur^0x75, 1) // unigram; the xor keeps unigrams apart from bigrams
		if havePrev {
			add(v, prev*31+cur, 1)
		}
		prev, havePrev, inTok = cur, true, false
	}
	for _, r := range s {
		if r < utf8.RuneSelf { // ASCII fast path
			c := byte(r)
			switch {
			case c >= 'A' && c <= 'Z':
				c += 'a' - 'A'
				fallthrough
			case c >= 'a' && c <= 'z' || c >= '0' && c <= '9':
				if !inTok {
					cur, inTok = fnvOffset, true
				}
				cur = (cur ^ uint64(c)) * fnvPrime
			default:
				flush()
			}
			continue
		}
		switch {
		case isIdeograph(r):
			flush()
			cur, inTok = fnvOffset, true
			cur = fnvRune(cur, unicode.ToLower(r), &buf)
			flush()
		case unicode.IsLetter(r) || unicode.IsDigit(r) || (inTok && unicode.IsMark(r)):
			if !inTok {
				cur, inTok = fnvOffset, true
			}
			cur = fnvRune(cur, unicode.ToLower(r), &buf)
		default:
			flush()
		}
	}
	flush()

	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum > 0 {
		inv := float32(1 / math.Sqrt(sum))
		for i := range v {
			v[i] *= inv
		}
	}
	return v
}

func fnvRune(h uint64, r rune, buf *[utf8.UTFMax]byte) uint64 {
	n := utf8.EncodeRune(buf[:], r)
	for _, b := range buf[:n] {
		h ^= uint64(b)
		h *= fnvPrime
	}
	return h
}

// add adds w to the coordinate and sign picked by the feature hash h.
func add(v []float32, h uint64, w float32) {
	// splitmix64 finalizer: spreads FNV's weak low bits over the word.
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	i := int((h & 0xffffffff) % uint64(len(v)))
	if h>>63 == 1 {
		w = -w
	}
	v[i] += w
}

// isIdeograph reports whether r is written without spaces between words, so
// each character is taken as a token.
func isIdeograph(r rune) bool {
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana)
}
