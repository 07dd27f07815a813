package index

import (
	"bytes"
	"compress/flate"
	"encoding/binary"
	"io"
	"strings"
	"sync"
)

// Record texts are held packed: a chunk's text is often as large as its
// vector, so Memory stores it DEFLATE-compressed (the fastest level) when
// that saves at least an eighth, raw otherwise. A 750-byte chunk of
// English prose packs to about 60% of its size (news articles of
// /work/shared/corpus, 1.7x), repetitive documentation further; packing
// costs about 30 µs of CPU per chunk, unpacking one for Get or a query
// hit a few microseconds. The packed form is:
//
//	""                   the empty text
//	textRaw  text        stored as given
//	textFlate len data   uvarint length of the text, then its DEFLATE stream
const (
	textRaw   = 0
	textFlate = 1
)

// minPackedText is the shortest text worth compressing.
const minPackedText = 128

// textPacker compresses texts with one reused DEFLATE writer (Memory
// calls it with its write lock held).
type textPacker struct {
	w   *flate.Writer
	buf bytes.Buffer
}

// pack returns the packed form of text, sharing no memory with it.
func (p *textPacker) pack(text string) string {
	if text == "" {
		return ""
	}
	if len(text) >= minPackedText {
		p.buf.Reset()
		p.buf.WriteByte(textFlate)
		p.buf.Write(binary.AppendUvarint(nil, uint64(len(text))))
		if p.w == nil {
			p.w, _ = flate.NewWriter(&p.buf, flate.BestSpeed) // a valid level: no error
		} else {
			p.w.Reset(&p.buf)
		}
		_, _ = io.WriteString(p.w, text) // writes to a bytes.Buffer do not fail
		_ = p.w.Close()
		if p.buf.Len() <= len(text)-len(text)/8 {
			return p.buf.String()
		}
	}
	var b strings.Builder
	b.Grow(1 + len(text))
	b.WriteByte(textRaw)
	b.WriteString(text)
	return b.String()
}

// inflaters are DEFLATE readers for unpackText to reuse.
var inflaters sync.Pool

// unpackText returns the text of a packed form made by textPacker.pack.
func unpackText(packed string) string {
	if packed == "" {
		return ""
	}
	if packed[0] == textRaw {
		return packed[1:]
	}
	n, k := binary.Uvarint([]byte(packed[1:min(len(packed), 1+binary.MaxVarintLen64)]))
	src := strings.NewReader(packed[1+k:])
	r, _ := inflaters.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReader(src)
	} else {
		_ = r.(flate.Resetter).Reset(src, nil)
	}
	defer inflaters.Put(r)
	var b strings.Builder
	b.Grow(int(n))
	// The packed form was made by pack from a string in memory: it cannot
	// be corrupt short of memory corruption.
	_, _ = io.Copy(&b, r)
	return b.String()
}
