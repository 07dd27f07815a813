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
// vector, so Memory stores it DEFLATE-compressed when that saves at least
// an eighth, raw otherwise. A chunk alone is too short for DEFLATE to
// find much to reuse, so once the index has packed dictionaryBytes of
// text, that text becomes a preset dictionary (RFC 1951's window primed
// before the stream) for every later chunk: the words, markup and
// phrases a site repeats are then found in it. Over 265,000 chunks of
// prose (TestPeakHeapMemory) packed texts went from 0.59 of their size
// to 0.52 with it, and on the bench site's chunks, which repeat a
// documentation vocabulary, from 0.34 to 0.07; packing costs 20–40 µs of
// CPU a chunk, unpacking one for Get or a query hit a few microseconds.
// The packed form is:
//
//	""                   the empty text
//	textRaw  text        stored as given
//	textFlate len data   uvarint length of the text, then its DEFLATE stream
//	textDict  len data   the same, compressed with the packer's dictionary
const (
	textRaw   = 0
	textFlate = 1
	textDict  = 2
)

// minPackedText is the shortest text worth compressing.
const minPackedText = 128

// dictionaryBytes is the size of the preset dictionary: the first texts
// an index packs, up to this many bytes. Larger compresses better and
// costs more CPU per text (the compressor hashes the whole dictionary for
// every text): 8 KiB packed prose to 0.49 for 60 µs a chunk.
const dictionaryBytes = 4 << 10

// dictLevel is the compression level with the dictionary (BestSpeed,
// Go's level 1, does not use one).
const dictLevel = 2

// textPacker compresses texts with reused DEFLATE writers (Memory calls
// it with its write lock held; unpack with at least its read lock).
type textPacker struct {
	w, wd *flate.Writer // without and with the dictionary
	buf   bytes.Buffer
	// dict is the preset dictionary once collected (then never changed);
	// seed collects it.
	dict []byte
	seed []byte
}

// pack returns the packed form of text, sharing no memory with it.
func (p *textPacker) pack(text string) string {
	if text == "" {
		return ""
	}
	if p.dict == nil {
		p.seed = append(p.seed, text[:min(len(text), dictionaryBytes-len(p.seed))]...)
		if len(p.seed) == dictionaryBytes {
			p.dict, p.seed = p.seed, nil
		}
	}
	if len(text) >= minPackedText {
		if packed, ok := p.deflate(text); ok {
			return packed
		}
	}
	var b strings.Builder
	b.Grow(1 + len(text))
	b.WriteByte(textRaw)
	b.WriteString(text)
	return b.String()
}

// deflate compresses text, with the dictionary when there is one; ok is
// false when that saves less than an eighth.
func (p *textPacker) deflate(text string) (string, bool) {
	p.buf.Reset()
	w := &p.w
	tag := byte(textFlate)
	if p.dict != nil {
		w, tag = &p.wd, textDict
	}
	p.buf.WriteByte(tag)
	p.buf.Write(binary.AppendUvarint(nil, uint64(len(text))))
	switch {
	case *w == nil && p.dict != nil:
		*w, _ = flate.NewWriterDict(&p.buf, dictLevel, p.dict) // a valid level: no error
	case *w == nil:
		*w, _ = flate.NewWriter(&p.buf, flate.BestSpeed)
	default:
		(*w).Reset(&p.buf) // keeps the writer's dictionary
	}
	_, _ = io.WriteString(*w, text) // writes to a bytes.Buffer do not fail
	_ = (*w).Close()
	if p.buf.Len() > len(text)-len(text)/8 {
		return "", false
	}
	return p.buf.String(), true
}

// inflaters are DEFLATE readers for unpack to reuse.
var inflaters sync.Pool

// unpack returns the text of a packed form made by pack.
func (p *textPacker) unpack(packed string) string {
	if packed == "" {
		return ""
	}
	if packed[0] == textRaw {
		return packed[1:]
	}
	var dict []byte
	if packed[0] == textDict {
		dict = p.dict
	}
	n, k := binary.Uvarint([]byte(packed[1:min(len(packed), 1+binary.MaxVarintLen64)]))
	src := strings.NewReader(packed[1+k:])
	r, _ := inflaters.Get().(io.ReadCloser)
	if r == nil {
		r = flate.NewReaderDict(src, dict)
	} else {
		_ = r.(flate.Resetter).Reset(src, dict)
	}
	defer inflaters.Put(r)
	var b strings.Builder
	b.Grow(int(n))
	// The packed form was made by pack from a string in memory: it cannot
	// be corrupt short of memory corruption.
	_, _ = io.Copy(&b, r)
	return b.String()
}
