package sqlite

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
)

// Stats.Recent is stored in a compact binary form (column pages.recent):
//
//	byte 0       format version, checksFormat or checksFormatCo
//	per check    a flags byte, then Elapsed as a signed varint, then
//	             Modified as a signed varint unless a flag gives it, then
//	             (format checksFormatCo, flag bit 3) the CoChance step
//
// Flags: bit 0 Changed; bit 1 Modified equals Elapsed (an unchanged check
// with a usable Last-Modified); bit 2 Modified is zero (no usable
// Last-Modified); bit 3 a byte of CoChance follows, in steps of
// 1/crawlstate.CoChanceSteps (1 to CoChanceSteps; a check without the
// flag has none). Other bits must be zero, bits 1 and 2 are never both
// set, and bit 3 only appears in format checksFormatCo, which a window is
// written in only when one of its checks has a CoChance. For intervals of
// hours to weeks a check costs 8 bytes, 7 more when its Modified term is
// its own (a change with a usable Last-Modified) and 1 more with a
// CoChance; a window of 32 checks takes 250 to 350 bytes. No checks is
// stored as NULL.
const (
	checksFormat   = 1
	checksFormatCo = 2
)

const (
	checkChanged        = 1 << 0
	checkModifiedIsSame = 1 << 1
	checkModifiedIsZero = 1 << 2
	checkCoChance       = 1 << 3
	checkKnownFlags     = checkChanged | checkModifiedIsSame | checkModifiedIsZero
)

// encodeChecks returns the stored form of cs; nil for no checks.
func encodeChecks(cs []crawlstate.Check) []byte {
	if len(cs) == 0 {
		return nil
	}
	return appendChecks(make([]byte, 0, 1+len(cs)*2*binary.MaxVarintLen64), cs)
}

// appendChecks appends the stored form of cs, which must not be empty, to
// buf: a writer reuses one buffer for every row of a batch (the driver
// copies a bound blob).
func appendChecks(buf []byte, cs []crawlstate.Check) []byte {
	format := byte(checksFormat)
	for _, c := range cs {
		if crawlstate.CoChanceStep(c.CoChance) > 0 {
			format = checksFormatCo
			break
		}
	}
	buf = append(buf, format)
	for _, c := range cs {
		var flags byte
		if c.Changed {
			flags |= checkChanged
		}
		co := crawlstate.CoChanceStep(c.CoChance)
		if co > 0 {
			flags |= checkCoChance
		}
		switch c.Modified {
		case 0:
			flags |= checkModifiedIsZero
		case c.Elapsed:
			flags |= checkModifiedIsSame
		}
		buf = append(buf, flags)
		buf = binary.AppendVarint(buf, int64(c.Elapsed))
		if flags&(checkModifiedIsZero|checkModifiedIsSame) == 0 {
			buf = binary.AppendVarint(buf, int64(c.Modified))
		}
		if co > 0 {
			buf = append(buf, co)
		}
	}
	return buf
}

// decodeChecks is the inverse of encodeChecks. Empty input is no checks.
// It decodes in one pass into a buffer on the stack and returns an exact
// copy of it: one allocation, no count pass (a window longer than the
// buffer grows it as append does).
func decodeChecks(b []byte) ([]crawlstate.Check, error) {
	if len(b) == 0 {
		return nil, nil
	}
	known := byte(checkKnownFlags)
	switch b[0] {
	case checksFormat:
	case checksFormatCo:
		known |= checkCoChance
	default:
		return nil, fmt.Errorf("%w: recent checks in format %d; this build reads formats %d and %d", backend.ErrCorrupt, b[0], checksFormat, checksFormatCo)
	}
	var stack [decodeChecksStack]crawlstate.Check
	out := stack[:0]
	for i := 1; i < len(b); {
		flags := b[i]
		i++
		if flags&^known != 0 || (flags&checkModifiedIsSame != 0 && flags&checkModifiedIsZero != 0) {
			return nil, fmt.Errorf("%w: recent check %d has flags %#x", backend.ErrCorrupt, len(out), flags)
		}
		elapsed, next := varintAt(b, i)
		if next < 0 {
			return nil, fmt.Errorf("%w: recent check %d: truncated or malformed elapsed time", backend.ErrCorrupt, len(out))
		}
		i = next
		c := crawlstate.Check{Elapsed: time.Duration(elapsed), Changed: flags&checkChanged != 0}
		switch {
		case flags&checkModifiedIsSame != 0:
			c.Modified = c.Elapsed
		case flags&checkModifiedIsZero != 0:
		default:
			m, next := varintAt(b, i)
			if next < 0 {
				return nil, fmt.Errorf("%w: recent check %d: truncated or malformed modified term", backend.ErrCorrupt, len(out))
			}
			i = next
			c.Modified = time.Duration(m)
		}
		if flags&checkCoChance != 0 {
			if i >= len(b) || b[i] == 0 || b[i] > crawlstate.CoChanceSteps {
				return nil, fmt.Errorf("%w: recent check %d: truncated or malformed co-change chance", backend.ErrCorrupt, len(out))
			}
			c.CoChance = float64(b[i]) / crawlstate.CoChanceSteps
			i++
		}
		out = append(out, c)
	}
	res := make([]crawlstate.Check, len(out))
	copy(res, out)
	return res, nil
}

// varintAt decodes the signed varint at b[i:] as binary.Varint does and
// returns it with the index after it, or a negative index if it is
// truncated or overflows 64 bits.
func varintAt(b []byte, i int) (int64, int) {
	var x uint64
	for s := uint(0); i < len(b); s += 7 {
		c := b[i]
		i++
		if c < 0x80 {
			if s == 63 && c > 1 || s > 63 {
				return 0, -1
			}
			x |= uint64(c) << s
			return int64(x>>1) ^ -int64(x&1), i
		}
		x |= uint64(c&0x7f) << s
	}
	return 0, -1
}

// decodeChecksStack is how many checks decodeChecks decodes without a
// heap buffer of its own: twice the engine's window (schedule.DefaultWindow).
const decodeChecksStack = 64

// Links are stored (column links.links) as a format byte, linksFormat,
// then per link its length in bytes as an unsigned varint and its bytes:
// any string round-trips, whatever its encoding.
const linksFormat = 1

// encodeLinks returns the stored form of links.
func encodeLinks(links []string) []byte {
	size := 1
	for _, l := range links {
		size += binary.MaxVarintLen64 + len(l)
	}
	buf := make([]byte, 1, size)
	buf[0] = linksFormat
	for _, l := range links {
		buf = binary.AppendUvarint(buf, uint64(len(l)))
		buf = append(buf, l...)
	}
	return buf
}

// decodeLinks is the inverse of encodeLinks; no links is nil.
func decodeLinks(b []byte) ([]string, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if b[0] != linksFormat {
		return nil, fmt.Errorf("%w: links in format %d; this build reads format %d", backend.ErrCorrupt, b[0], linksFormat)
	}
	b = b[1:]
	var links []string
	for len(b) > 0 {
		n, k := binary.Uvarint(b)
		if k <= 0 || n > uint64(len(b)-k) {
			return nil, fmt.Errorf("%w: link %d: truncated or malformed", backend.ErrCorrupt, len(links))
		}
		b = b[k:]
		links = append(links, string(b[:n]))
		b = b[n:]
	}
	return links, nil
}
