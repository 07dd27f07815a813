package index_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/index"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata")

// requireSame asserts two indexes hold the same records.
func requireSame(t *testing.T, want, got *index.Memory) {
	t.Helper()
	require.Equal(t, want.Dimensions(), got.Dimensions())
	wn, _ := want.Count(ctx)
	gn, _ := got.Count(ctx)
	require.Equal(t, wn, gn)
	if wn == 0 {
		return
	}
	q := make([]float32, want.Dimensions())
	all, err := want.Query(ctx, q, wn, nil) // every record, by ID
	require.NoError(t, err)
	for _, h := range all {
		r, ok, err := got.Get(ctx, h.ID)
		require.NoError(t, err)
		require.True(t, ok, h.ID)
		require.Equal(t, h.Record, r)
	}
}

func snapshotBytes(t *testing.T, m *index.Memory) []byte {
	var buf bytes.Buffer
	require.NoError(t, m.WriteSnapshot(ctx, &buf))
	return buf.Bytes()
}

func TestSnapshotRoundTrip(t *testing.T) {
	m := smallIndex(t)
	require.NoError(t, m.Upsert(ctx, []index.Record{
		{ID: "unicode ✓", Vector: []float32{0.5, -0.25, 1e-30}, Text: "网页 text\x00with NUL", Metadata: map[string]string{"": "empty key", "k": ""}},
		{ID: "no-meta", Vector: []float32{1, 1, 1}},
	}))
	dir := t.TempDir()
	path := filepath.Join(dir, "index.snap")
	require.NoError(t, m.SaveFile(ctx, path))

	got, err := index.LoadFile(ctx, path)
	require.NoError(t, err)
	requireSame(t, m, got)
	hw, _ := m.Query(ctx, []float32{1, 0.5, 0}, 4, index.Filter{"site": "x"})
	hg, _ := got.Query(ctx, []float32{1, 0.5, 0}, 4, index.Filter{"site": "x"})
	require.Equal(t, hw, hg)

	// Only the snapshot is left in the directory, readable by its owner only.
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	info, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, fs.FileMode(0o600), info.Mode().Perm())

	// Saving again replaces the file.
	require.NoError(t, m.Delete(ctx, []string{"a"}))
	require.NoError(t, m.SaveFile(ctx, path))
	got, err = index.LoadFile(ctx, path)
	require.NoError(t, err)
	requireSame(t, m, got)

	// The bytes are deterministic (metadata keys are sorted).
	require.Equal(t, snapshotBytes(t, m), snapshotBytes(t, got))
}

func TestSnapshotEmptyIndex(t *testing.T) {
	for _, dims := range []int{0, 5} {
		m := index.NewMemory(dims)
		got, err := index.ReadSnapshot(ctx, bytes.NewReader(snapshotBytes(t, m)))
		require.NoError(t, err)
		requireSame(t, m, got)
	}
}

func TestSnapshotFileErrors(t *testing.T) {
	_, err := index.LoadFile(ctx, filepath.Join(t.TempDir(), "missing"))
	require.ErrorIs(t, err, fs.ErrNotExist)

	err = smallIndex(t).SaveFile(ctx, filepath.Join(t.TempDir(), "no", "such", "dir", "snap"))
	require.Error(t, err)

	c, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, smallIndex(t).SaveFile(c, filepath.Join(t.TempDir(), "snap")), context.Canceled)
}

// A failed save leaves the previous snapshot in place.
func TestSnapshotSaveFailureKeepsOldFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "snap")
	m := smallIndex(t)
	require.NoError(t, m.SaveFile(ctx, path))
	before, err := os.ReadFile(path)
	require.NoError(t, err)

	// A directory in the way makes the final rename fail.
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.Mkdir(path, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(path, "keep"), before, 0o600))
	require.Error(t, m.SaveFile(ctx, path))
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1, "temporary file left behind")
}

func TestSnapshotCorrupt(t *testing.T) {
	good := snapshotBytes(t, smallIndex(t))
	// body is a snapshot start: magic, version, then rest; sealed appends
	// the checksum.
	body := func(version uint32, rest ...byte) []byte {
		b := append([]byte("RCRWLIDX"), binary.LittleEndian.AppendUint32(nil, version)...)
		return append(b, rest...)
	}
	sealed := func(b []byte) []byte { return binary.LittleEndian.AppendUint32(b, crc32c(b)) }
	one := []byte{0, 0, 0x80, 0x3f} // float32 1.0
	tests := []struct {
		name   string
		data   []byte
		reason string
	}{
		{"empty", nil, "bad magic"},
		{"not a snapshot", []byte("{\"json\": true}"), "bad magic"},
		{"future version", sealed(body(2, 0, 0)), "unknown version 2"},
		{"truncated header", good[:10], "truncated header"},
		{"truncated record", good[:len(good)/2], "truncated"},
		{"truncated checksum", good[:len(good)-2], "truncated before the checksum"},
		{"flipped byte", flip(good, len(good)/2), ""},
		{"wrong checksum", flip(good, len(good)-1), "checksum mismatch"},
		{"trailing data", append(append([]byte(nil), good...), 0), "data after the checksum"},
		{"huge dimensions", sealed(body(1, 0xff, 0xff, 0xff, 0x7f, 1)), "dimensions"},
		{"records without dimensions", sealed(body(1, 0, 1)), "0 dimensions"},
		{"huge string", sealed(body(1, 1, 1, 0xff, 0xff, 0xff, 0xff, 0x0f)), "exceeds"},
		{"varint overflow", sealed(body(1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f)), "overflows"},
		{"too many metadata pairs", sealed(body(1, 1, 1, 1, 'x', 0, 0xff, 0xff, 0x7f)), "metadata pairs"},
		{"empty ID", sealed(append(body(1, 1, 1, 0, 0, 0), one...)), "empty ID"},
		{"NaN", sealed(body(1, 1, 1, 1, 'x', 0, 0, 0, 0, 0xc0, 0x7f)), "NaN"},
		{"repeated ID", sealed(append(append(body(1, 1, 2, 1, 'x', 0, 0), one...), append([]byte{1, 'x', 0, 0}, one...)...)), "repeats ID"},
		{"repeated metadata key", sealed(append(body(1, 1, 1, 1, 'x', 0, 2, 1, 'k', 0, 1, 'k', 0), one...)), "repeats a metadata key"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := index.ReadSnapshot(ctx, bytes.NewReader(tc.data))
			require.Nil(t, m)
			var ce *index.CorruptError
			require.ErrorAs(t, err, &ce)
			require.Contains(t, ce.Error(), tc.reason)

			path := filepath.Join(t.TempDir(), "snap")
			require.NoError(t, os.WriteFile(path, tc.data, 0o600))
			_, err = index.LoadFile(ctx, path)
			require.ErrorAs(t, err, &ce)
			require.Equal(t, path, ce.Path)
		})
	}
}

// Every strict prefix of a snapshot is rejected as corrupt.
func TestSnapshotEveryTruncation(t *testing.T) {
	good := snapshotBytes(t, smallIndex(t))
	for n := range len(good) {
		_, err := index.ReadSnapshot(ctx, bytes.NewReader(good[:n]))
		var ce *index.CorruptError
		require.ErrorAs(t, err, &ce, "prefix of %d bytes", n)
	}
}

func flip(b []byte, i int) []byte {
	c := append([]byte(nil), b...)
	c[i] ^= 0x55
	return c
}

// The committed version-1 snapshot still loads: the format is a promise to
// files written by earlier releases.
func TestSnapshotGoldenV1(t *testing.T) {
	path := filepath.Join("testdata", "v1.snap")
	m := smallIndex(t)
	if *update {
		require.NoError(t, m.SaveFile(ctx, path))
		require.NoError(t, os.Chmod(path, 0o644))
	}
	got, err := index.LoadFile(ctx, path)
	require.NoError(t, err, "run go test ./index -run TestSnapshotGoldenV1 -update")
	requireSame(t, m, got)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(string(raw), "RCRWLIDX\x01\x00\x00\x00"))
}

func crc32c(b []byte) uint32 {
	// Castagnoli, as the format specifies; computed bit by bit so the test
	// does not share the implementation's table.
	crc := ^uint32(0)
	for _, x := range b {
		crc ^= uint32(x)
		for range 8 {
			if crc&1 == 1 {
				crc = crc>>1 ^ 0x82f63b78
			} else {
				crc >>= 1
			}
		}
	}
	return ^crc
}

func TestCorruptErrorUnwraps(t *testing.T) {
	_, err := index.ReadSnapshot(ctx, bytes.NewReader([]byte("RCRWLIDX\x01")))
	var ce *index.CorruptError
	require.ErrorAs(t, err, &ce)
	require.True(t, errors.Is(err, ce.Err))
}
