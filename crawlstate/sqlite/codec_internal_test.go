package sqlite

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
	"github.com/stretchr/testify/require"
)

func TestChecksRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		in   []crawlstate.Check
		size int // encoded bytes
	}{
		{"none", nil, 0},
		{"empty", []crawlstate.Check{}, 0},
		{"modified zero", []crawlstate.Check{{Elapsed: 20 * time.Hour}}, 1 + 1 + 7},
		{"modified same", []crawlstate.Check{{Elapsed: 20*time.Hour + 1, Modified: 20*time.Hour + 1}}, 1 + 1 + 7},
		{"modified other", []crawlstate.Check{{Elapsed: 20 * time.Hour, Changed: true, Modified: 3 * time.Hour}}, 1 + 1 + 7 + 7},
		{"zero elapsed", []crawlstate.Check{{}}, 1 + 1 + 1},
		{"co-change chance", []crawlstate.Check{{Elapsed: 20 * time.Hour, Changed: true, CoChance: 64.0 / crawlstate.CoChanceSteps}, {Elapsed: 20 * time.Hour}}, 1 + 1 + 7 + 1 + 1 + 7},
		{"negative and extreme values", []crawlstate.Check{
			{Elapsed: -time.Second, Modified: math.MinInt64},
			{Elapsed: math.MaxInt64, Changed: true, Modified: math.MaxInt64 - 1},
		}, 1 + 1 + 5 + 10 + 1 + 10 + 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := encodeChecks(tc.in)
			require.Len(t, b, tc.size)
			got, err := decodeChecks(b)
			require.NoError(t, err)
			if len(tc.in) == 0 {
				require.Nil(t, got)
				return
			}
			require.Equal(t, tc.in, got)
		})
	}
}

// A full window of the engine's checks stays small: the point of the
// binary form.
func TestChecksWindowSize(t *testing.T) {
	window := make([]crawlstate.Check, 32)
	for i := range window {
		e := time.Duration(20+i)*time.Hour + time.Duration(i*7919)
		window[i] = crawlstate.Check{Elapsed: e, Modified: e}
		if i%5 == 0 {
			window[i] = crawlstate.Check{Elapsed: e, Changed: true, Modified: e / 3}
		}
	}
	b := encodeChecks(window)
	require.LessOrEqual(t, len(b), 1+32*8+7*7, "8 bytes a check, 7 more for a change's own modified term")
	got, err := decodeChecks(b)
	require.NoError(t, err)
	require.Equal(t, window, got)
}

func TestDecodeChecksRejects(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"unknown format", []byte{3, 0, 0}, "format 3"},
		{"unknown flag", []byte{checksFormatCo, 0x10, 0}, "flags 0x10"},
		{"co-change chance in format 1", []byte{checksFormat, checkModifiedIsZero | checkCoChance, 0, 1}, "flags 0xc"},
		{"no co-change chance", []byte{checksFormatCo, checkModifiedIsZero | checkCoChance, 0}, "malformed co-change"},
		{"zero co-change chance", []byte{checksFormatCo, checkModifiedIsZero | checkCoChance, 0, 0}, "malformed co-change"},
		{"co-change chance above one", []byte{checksFormatCo, checkModifiedIsZero | checkCoChance, 0, crawlstate.CoChanceSteps + 1}, "malformed co-change"},
		{"contradicting flags", []byte{checksFormat, checkModifiedIsSame | checkModifiedIsZero, 0}, "flags 0x6"},
		{"no elapsed", []byte{checksFormat, checkModifiedIsZero}, "malformed elapsed"},
		{"truncated elapsed", []byte{checksFormat, checkModifiedIsZero, 0x80}, "malformed elapsed"},
		{"no modified", []byte{checksFormat, checkChanged, 2}, "malformed modified"},
		{"varint overflow", []byte{checksFormat, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}, "malformed elapsed"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeChecks(tc.in)
			require.ErrorIs(t, err, backend.ErrCorrupt)
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// varintAt reads what binary.Varint reads and rejects what it rejects:
// every value's encoding, truncations and overlong encodings.
func TestVarintAtMatchesBinaryVarint(t *testing.T) {
	var inputs [][]byte
	for _, v := range []int64{0, 1, -1, 63, -64, 64, 1 << 20, 20 * int64(time.Hour), math.MaxInt64, math.MinInt64} {
		enc := binary.AppendVarint(nil, v)
		inputs = append(inputs, enc, append(enc, 0x05))
		for i := range enc {
			inputs = append(inputs, enc[:i])
		}
	}
	for n := 1; n <= 12; n++ {
		long := bytes.Repeat([]byte{0xff}, n)
		inputs = append(inputs, long, append(long, 0x00), append(long, 0x01), append(long, 0x02), append(long, 0x7f))
	}
	for _, in := range inputs {
		want, n := binary.Varint(in)
		for _, pre := range []int{0, 3} {
			b := append(make([]byte, pre), in...)
			got, next := varintAt(b, pre)
			if n <= 0 {
				require.Negative(t, next, "%x", in)
				continue
			}
			require.Equal(t, want, got, "%x", in)
			require.Equal(t, pre+n, next, "%x", in)
		}
	}
}

func TestLinksRoundTrip(t *testing.T) {
	for _, in := range [][]string{
		{"https://ex.com/a"},
		{"", "x", ""},
		{"\xff\xfe not UTF-8", "with\x00nul", "日本"},
	} {
		got, err := decodeLinks(encodeLinks(in))
		require.NoError(t, err)
		require.Equal(t, in, got)
	}
	got, err := decodeLinks(encodeLinks(nil))
	require.NoError(t, err)
	require.Nil(t, got)

	for _, bad := range [][]byte{{2}, {linksFormat, 5, 'a'}, {linksFormat, 0x80}} {
		_, err := decodeLinks(bad)
		require.ErrorIs(t, err, backend.ErrCorrupt, "%x", bad)
	}
}

func FuzzDecodeChecks(f *testing.F) {
	f.Add([]byte(nil))
	f.Add(encodeChecks([]crawlstate.Check{{Elapsed: time.Hour, Changed: true, Modified: time.Minute}, {Elapsed: 2 * time.Hour, Modified: 2 * time.Hour}, {Elapsed: 3}}))
	f.Add([]byte{checksFormat, 0xff})
	f.Add([]byte{checksFormat, 0, 0x80, 0x80})
	f.Add([]byte{checksFormatCo, checkChanged | checkModifiedIsZero | checkCoChance, 2, 64})
	f.Fuzz(func(t *testing.T, b []byte) {
		cs, err := decodeChecks(b)
		if err != nil {
			require.ErrorIs(t, err, backend.ErrCorrupt)
			return
		}
		again, err := decodeChecks(encodeChecks(cs))
		require.NoError(t, err)
		if len(cs) == 0 {
			require.Empty(t, again)
			return
		}
		require.Equal(t, cs, again)
	})
}

func FuzzDecodeLinks(f *testing.F) {
	f.Add([]byte(nil))
	f.Add(encodeLinks([]string{"https://ex.com/a", "", "b"}))
	f.Add([]byte{linksFormat, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		links, err := decodeLinks(b)
		if err != nil {
			require.ErrorIs(t, err, backend.ErrCorrupt)
			return
		}
		again, err := decodeLinks(encodeLinks(links))
		require.NoError(t, err)
		require.Equal(t, links, again)
	})
}

// BenchmarkDecodeChecks measures decoding a full window of 32 checks, as
// the due query does for every row it returns.
func BenchmarkDecodeChecks(b *testing.B) {
	window := make([]crawlstate.Check, 32)
	for i := range window {
		e := time.Duration(20+i%30)*time.Hour + time.Duration(i*7919)%time.Second
		window[i] = crawlstate.Check{Elapsed: e, Changed: i%5 == 0, Modified: e}
		if window[i].Changed {
			window[i].Modified = e / 3
		}
	}
	enc := encodeChecks(window)
	b.ReportAllocs()
	for b.Loop() {
		got, err := decodeChecks(enc)
		if err != nil || len(got) != len(window) {
			b.Fatal(len(got), err)
		}
	}
}
