package index

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
)

// Snapshot format, version 1. All integers are unsigned varints unless noted.
//
//	magic    8 bytes "RCRWLIDX"
//	version  4 bytes little-endian uint32 = 1
//	dims, count
//	count × record:
//	    len(ID) ID  len(Text) Text  npairs  npairs × (len(key) key len(value) value)
//	    dims × float32, little-endian IEEE 754
//	crc      4 bytes little-endian CRC-32C of everything before it
const (
	snapshotMagic   = "RCRWLIDX"
	snapshotVersion = 1
)

// Limits a snapshot must respect; larger values mean a corrupt file.
const (
	maxSnapshotDims   = 1 << 16
	maxSnapshotString = 64 << 20
	maxSnapshotPairs  = 1 << 16
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// SaveFile writes a snapshot of the index to path atomically: to a
// temporary file in the same directory, synced, then renamed over path, so
// a crash leaves either the old snapshot or the new one. The file is
// readable by its owner only. Writers to the index wait while it is saved.
func (m *Memory) SaveFile(ctx context.Context, path string) (err error) {
	if err := ctx.Err(); err != nil {
		return err
	}
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	f, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("index: save snapshot: %w", err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	w := bufio.NewWriterSize(f, 1<<20)
	if err := m.WriteSnapshot(ctx, w); err != nil {
		return fmt.Errorf("index: save snapshot %s: %w", path, err)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("index: save snapshot %s: %w", path, err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("index: save snapshot %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("index: save snapshot %s: %w", path, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("index: save snapshot %s: %w", path, err)
	}
	// Make the rename durable; not every platform can sync a directory.
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}

// LoadFile reads a snapshot written by SaveFile. A missing file gives an
// error wrapping fs.ErrNotExist; an unreadable one a *CorruptError.
func LoadFile(ctx context.Context, path string) (*Memory, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("index: load snapshot: %w", err)
	}
	defer f.Close()
	size := int64(-1)
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		size = st.Size()
	}
	m, err := readSnapshot(ctx, bufio.NewReaderSize(f, 1<<20), size)
	if err != nil {
		var ce *CorruptError
		if errors.As(err, &ce) {
			ce.Path = path
			return nil, ce
		}
		return nil, fmt.Errorf("index: load snapshot %s: %w", path, err)
	}
	return m, nil
}

// WriteSnapshot writes the index to w in the snapshot format.
func (m *Memory) WriteSnapshot(ctx context.Context, w io.Writer) error {
	m.mu.RLock()
	defer m.mu.RUnlock()
	h := crc32.New(castagnoli)
	sw := &snapWriter{w: io.MultiWriter(w, h)}
	sw.raw([]byte(snapshotMagic))
	sw.raw(binary.LittleEndian.AppendUint32(nil, snapshotVersion))
	sw.uvarint(uint64(m.dims))
	sw.uvarint(uint64(len(m.ids)))
	buf := make([]byte, 4*m.dims)
	for slot, id := range m.ids {
		if slot&1023 == 1023 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		sw.str(id)
		sw.str(m.pack.unpack(m.texts[slot]))
		md := m.meta[slot] // keys sorted
		sw.uvarint(uint64(len(md.keys)))
		for i, k := range md.keys {
			sw.str(k)
			sw.str(md.vals[i])
		}
		vec := m.vec
		if m.q8 {
			vec = m.vector
		}
		for i, x := range vec(slot) {
			binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
		}
		sw.raw(buf)
	}
	if sw.err != nil {
		return sw.err
	}
	_, err := w.Write(binary.LittleEndian.AppendUint32(nil, h.Sum32()))
	return err
}

type snapWriter struct {
	w   io.Writer
	err error
	tmp [binary.MaxVarintLen64]byte
}

func (s *snapWriter) raw(b []byte) {
	if s.err == nil {
		_, s.err = s.w.Write(b)
	}
}

func (s *snapWriter) uvarint(v uint64) { s.raw(s.tmp[:binary.PutUvarint(s.tmp[:], v)]) }

func (s *snapWriter) str(v string) {
	s.uvarint(uint64(len(v)))
	if s.err == nil {
		_, s.err = io.WriteString(s.w, v)
	}
}

// ReadSnapshot reads an index written by WriteSnapshot. Anything that is
// not a complete, valid snapshot — including trailing bytes — gives a
// *CorruptError; allocation grows only with the bytes actually read, so a
// hostile header cannot claim gigabytes.
func ReadSnapshot(ctx context.Context, r io.Reader) (*Memory, error) {
	return readSnapshot(ctx, r, -1)
}

// readSnapshot reads a snapshot of size bytes (-1 when unknown); a known
// size lets it allocate the whole index at once.
func readSnapshot(ctx context.Context, r io.Reader, size int64) (*Memory, error) {
	sr := &snapReader{r: bufio.NewReader(r), crc: crc32.New(castagnoli)}
	magic := sr.bytes(len(snapshotMagic))
	if sr.err != nil || string(magic) != snapshotMagic {
		return nil, sr.corrupt("not a recrawl index snapshot (bad magic)")
	}
	version := binary.LittleEndian.Uint32(sr.bytes(4))
	if sr.err == nil && version != snapshotVersion {
		return nil, sr.corrupt(fmt.Sprintf("unknown version %d (this build reads version %d)", version, snapshotVersion))
	}
	dims := sr.uvarint()
	count := sr.uvarint()
	if sr.err != nil {
		return nil, sr.corrupt("truncated header")
	}
	if dims > maxSnapshotDims || (dims == 0 && count > 0) {
		return nil, sr.corrupt(fmt.Sprintf("%d dimensions", dims))
	}
	// Each record takes at least 3 bytes plus its vector; trust the count
	// for allocation only as far as the file size (or 64 MiB) allows.
	perRecord := 3 + 4*dims
	if size >= 0 && count > uint64(size)/perRecord {
		return nil, sr.corrupt(fmt.Sprintf("%d records cannot fit in %d bytes", count, size))
	}
	prealloc := min(count, (64<<20)/perRecord)
	if size >= 0 {
		prealloc = count
	}
	m := NewMemory(int(dims))
	m.pos = make(map[string]int, prealloc)
	m.ids = make([]string, 0, prealloc)
	m.texts = make([]string, 0, prealloc)
	m.meta = make([]metadata, 0, prealloc)
	m.inv = make([]float32, 0, prealloc)
	vec := make([]float32, dims)
	for n := uint64(0); n < count; n++ {
		if n&1023 == 1023 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		id := sr.str()
		text := sr.str()
		pairs := sr.uvarint()
		if sr.err != nil {
			return nil, sr.corrupt(fmt.Sprintf("record %d truncated", n))
		}
		if pairs > maxSnapshotPairs {
			return nil, sr.corrupt(fmt.Sprintf("record %d claims %d metadata pairs", n, pairs))
		}
		var meta map[string]string
		if pairs > 0 {
			meta = make(map[string]string, min(pairs, 64))
			for range pairs {
				k := sr.str()
				meta[k] = sr.str()
			}
		}
		raw := sr.bytes(int(4 * dims))
		if sr.err != nil {
			return nil, sr.corrupt(fmt.Sprintf("record %d truncated", n))
		}
		for i := range vec {
			vec[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		if id == "" {
			return nil, sr.corrupt(fmt.Sprintf("record %d has an empty ID", n))
		}
		if _, dup := m.pos[id]; dup {
			return nil, sr.corrupt(fmt.Sprintf("record %d repeats ID %q", n, id))
		}
		if !finite(vec) {
			return nil, sr.corrupt(fmt.Sprintf("record %q holds NaN or infinity", id))
		}
		if len(meta) != int(pairs) {
			return nil, sr.corrupt(fmt.Sprintf("record %q repeats a metadata key", id))
		}
		slot := m.grow(id)
		m.texts[slot] = m.pack.pack(text)
		m.meta[slot] = m.compact(meta)
		m.setVector(slot, vec)
	}
	want := sr.crc.Sum32()
	sum := sr.bytes(4)
	if sr.err != nil {
		return nil, sr.corrupt("truncated before the checksum")
	}
	if got := binary.LittleEndian.Uint32(sum); got != want {
		return nil, sr.corrupt(fmt.Sprintf("checksum mismatch (stored %08x, computed %08x)", got, want))
	}
	if _, err := sr.r.ReadByte(); err != io.EOF {
		if err != nil {
			return nil, fmt.Errorf("index: read snapshot: %w", err)
		}
		return nil, sr.corrupt("data after the checksum")
	}
	return m, nil
}

// snapReader reads snapshot fields, feeding every byte to the checksum.
// The first error sticks; later reads return zero values.
type snapReader struct {
	r     *bufio.Reader
	crc   hash.Hash32
	off   int64
	err   error
	ioErr bool // err is an I/O error, not the end of the data
	one   [1]byte
}

func (s *snapReader) bytes(n int) []byte {
	if s.err != nil {
		return make([]byte, n)
	}
	var b []byte
	var err error
	if n <= 1<<16 {
		b = make([]byte, n)
		var got int
		got, err = io.ReadFull(s.r, b)
		b = b[:got]
	} else {
		// Grow with the data instead of trusting a length read from the file.
		var buf bytes.Buffer
		_, err = io.CopyN(&buf, s.r, int64(n))
		b = buf.Bytes()
	}
	s.off += int64(len(b))
	s.crc.Write(b)
	if err != nil {
		s.fail(err)
		return make([]byte, n)
	}
	return b
}

func (s *snapReader) uvarint() uint64 {
	if s.err != nil {
		return 0
	}
	var v uint64
	for shift := 0; ; shift += 7 {
		b, err := s.r.ReadByte()
		if err != nil {
			s.fail(err)
			return 0
		}
		s.off++
		s.one[0] = b
		s.crc.Write(s.one[:])
		if shift == 63 && b > 1 {
			s.err = errors.New("varint overflows 64 bits")
			return 0
		}
		v |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return v
		}
	}
}

func (s *snapReader) str() string {
	n := s.uvarint()
	if s.err != nil {
		return ""
	}
	if n > maxSnapshotString {
		s.err = fmt.Errorf("string of %d bytes exceeds the %d limit", n, maxSnapshotString)
		return ""
	}
	return string(s.bytes(int(n)))
}

func (s *snapReader) fail(err error) {
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	s.err = err
	s.ioErr = err != io.ErrUnexpectedEOF
}

// corrupt builds the error for the current position; a read error that is
// not the data running out is passed through as it is.
func (s *snapReader) corrupt(reason string) error {
	if s.ioErr {
		return fmt.Errorf("index: read snapshot at byte %d: %w", s.off, s.err)
	}
	return &CorruptError{Offset: s.off, Reason: reason, Err: s.err}
}
