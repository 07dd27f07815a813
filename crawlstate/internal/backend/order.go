package backend

import (
	"cmp"
	"slices"

	"github.com/recrawl/recrawl/crawlstate"
)

// KeyOrder returns the positions in urls of each distinct URL's first
// entry, in URL byte order (the order of the SQL stores' keys: SQLite's
// BINARY collation, PostgreSQL's "C"). A store writes a discovery batch
// in it: each URL once, as the contract says, and in key order, so that
// SQLite appends to its B-trees instead of splitting pages all over them
// and concurrent PostgreSQL upserts lock rows in one order. urls must
// have fewer than math.MaxInt32 entries (Checker.Upsert).
//
// It is a most-significant-digit radix sort with 8-byte digits: the URLs
// of one batch share long prefixes (scheme, host, section), which a
// comparison sort reads again on every comparison; here the shared prefix
// is skipped once, each round sorts 64-bit integers, and only the URLs
// still tied read their next 8 bytes.
func KeyOrder(urls []crawlstate.Discovered) []int32 {
	keys := make([]radixKey, len(urls))
	for i := range keys {
		keys[i] = radixKey{url: urls[i].URL, i: int32(i)}
	}
	radixSort(keys, sharedPrefix(keys))
	order := make([]int32, 0, len(urls))
	for _, k := range keys {
		if k.i >= 0 {
			order = append(order, k.i)
		}
	}
	return order
}

// radixKey is a URL of a batch, its position in the batch (-1 once it is
// known to repeat an earlier entry) and its digit: the 8 bytes from the
// current offset, big-endian, zero-padded.
type radixKey struct {
	digit uint64
	url   string
	i     int32
}

// radixSort sorts keys, whose URLs agree on their first off bytes, by
// URL and then by position, and marks every entry after the first of a
// URL with position -1.
func radixSort(keys []radixKey, off int) {
	if len(keys) < 2 {
		return
	}
	for j := range keys {
		keys[j].digit = digitAt(keys[j].url, off)
	}
	slices.SortFunc(keys, func(a, b radixKey) int { return cmp.Compare(a.digit, b.digit) })
	end := off + 8
	for len(keys) > 0 {
		n := 1
		for n < len(keys) && keys[n].digit == keys[0].digit {
			n++
		}
		tied := keys[:n]
		keys = keys[n:]
		if n == 1 {
			continue
		}
		// Of URLs with the same digit, one that ends within it is a
		// prefix of every longer one (its padding is zero bytes, which
		// theirs match): those come first, shortest first, and equal
		// URLs (same length) in batch order. The others are tied on 8
		// more bytes.
		slices.SortFunc(tied, func(a, b radixKey) int {
			ea, eb := len(a.url) <= end, len(b.url) <= end
			switch {
			case ea && eb:
				return cmp.Or(cmp.Compare(len(a.url), len(b.url)), cmp.Compare(a.i, b.i))
			case ea:
				return -1
			case eb:
				return 1
			}
			return 0
		})
		k := 0
		for ; k < n && len(tied[k].url) <= end; k++ {
			if k > 0 && len(tied[k].url) == len(tied[k-1].url) {
				tied[k].i = -1
			}
		}
		radixSort(tied[k:], end)
	}
}

// sharedPrefix returns how many leading bytes every URL of keys has in
// common.
func sharedPrefix(keys []radixKey) int {
	if len(keys) == 0 {
		return 0
	}
	p := keys[0].url
	for _, k := range keys[1:] {
		if len(k.url) >= len(p) && k.url[:len(p)] == p {
			continue
		}
		j := 0
		for j < min(len(p), len(k.url)) && k.url[j] == p[j] {
			j++
		}
		p = p[:j]
		if j == 0 {
			break
		}
	}
	return len(p)
}

// digitAt returns the 8 bytes of s from off as a big-endian integer,
// padded with zero bytes past the end of s.
func digitAt(s string, off int) uint64 {
	if off+8 <= len(s) {
		b := s[off : off+8]
		return uint64(b[0])<<56 | uint64(b[1])<<48 | uint64(b[2])<<40 | uint64(b[3])<<32 |
			uint64(b[4])<<24 | uint64(b[5])<<16 | uint64(b[6])<<8 | uint64(b[7])
	}
	var d uint64
	for j := range 8 {
		d <<= 8
		if off+j < len(s) {
			d |= uint64(s[off+j])
		}
	}
	return d
}
