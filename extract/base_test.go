package extract

import (
	"bytes"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// libraryTrimBlankLines transcribes the loop of the library's
// textutils.TrimConsecutiveNewlines (html-to-markdown v2.5.2, an internal
// package), which trimBlankLines replaces.
func libraryTrimBlankLines(input []byte) []byte {
	var result []byte
	newlines := 0
	spaces := []byte{}
	for i := 0; i < len(input); {
		r, size := utf8.DecodeRune(input[i:])
		switch r {
		case '\n':
			newlines++
			if newlines <= 2 {
				result = append(result, spaces...)
				result = append(result, '\n')
			}
			spaces = spaces[:0]
		case ' ':
			spaces = append(spaces, input[i:i+size]...)
		default:
			newlines = 0
			result = append(result, spaces...)
			result = append(result, input[i:i+size]...)
			spaces = spaces[:0]
		}
		i += size
	}
	return append(result, spaces...)
}

// libraryTrimHardBreaks is the library's
// textutils.TrimUnnecessaryHardLineBreaks.
func libraryTrimHardBreaks(b []byte) []byte {
	b = bytes.ReplaceAll(b, []byte("  \n\n"), []byte("\n\n"))
	b = bytes.ReplaceAll(b, []byte("  \n  \n"), []byte("\n\n"))
	return bytes.ReplaceAll(b, []byte("  \n \n"), []byte("\n\n"))
}

var blankLineCases = []string{
	"", "\n", "\n\n", "\n\n\n", " \n \n \n ", "a", "a\nb", "a\n\nb", "a\n\n\nb", "a \n \n \n  \nb",
	"a\n\n\n\n\n\nb\n\n\nc", "  lead\n\n\n", "trail   ", "\n\n\n\nx", "x\n \n\t\n\n\ny",
	"é\n\n\n\xff\n\n\n\xe2\x82", "code  \n\n\n  more", "a  \n\nb  \n  \nc  \n \nd", "  \n  \n  \n",
}

// TestTrimBlankLinesIsLibrarys: trimBlankLines and trimHardBreaks give
// what the library's functions give; trimBlankLines returns a prefix of
// its input, all of it when it drops nothing.
func TestTrimBlankLinesIsLibrarys(t *testing.T) {
	for _, s := range blankLineCases {
		require.Equal(t, string(libraryTrimBlankLines([]byte(s))), string(trimBlankLines([]byte(s))), "%q", s)
		in := []byte(s)
		require.Equal(t, string(libraryTrimHardBreaks(in)), string(trimHardBreaks(in)), "%q", s)
		require.Equal(t, s, string(in), "trimHardBreaks does not write to its input")
	}
	in := []byte("a\n\nb \n c")
	out := trimBlankLines(in)
	require.Same(t, &in[0], &out[0], "nothing dropped: the input itself")
	require.Len(t, out, len(in))
	in = []byte("a\n\n\n\nb")
	out = trimBlankLines(in)
	require.Same(t, &in[0], &out[0], "in place")
	require.Equal(t, "a\n\nb", string(out))
}

func FuzzTrimBlankLines(f *testing.F) {
	for _, s := range blankLineCases {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		keep := bytes.Clone(in)
		require.Equal(t, string(libraryTrimHardBreaks(keep)), string(trimHardBreaks(in)))
		require.Equal(t, string(keep), string(in), "trimHardBreaks does not write to its input")
		require.Equal(t, string(libraryTrimBlankLines(keep)), string(trimBlankLines(in)))
	})
}

// TestEscapeTextIsLibrarys: escapeText gives what the library's text
// transformer gives with escapeMarkdown as the context's escaping, for
// every byte alone and for the escape cases.
func TestEscapeTextIsLibrarys(t *testing.T) {
	lib := func(s string) string { return string(escapeMarkdown([]byte(angleBrackets.Replace(s)))) }
	for b := 0; b < 256; b++ {
		s := string([]byte{byte(b)})
		require.Equal(t, lib(s), escapeText(s), "byte %#x", b)
	}
	for _, s := range append(escapeCases, "", "a<b>c", "<<>>", "x\x00y>z", "plain words") {
		require.Equal(t, lib(s), escapeText(s), "%q", s)
	}
}

func FuzzEscapeText(f *testing.F) {
	for _, s := range escapeCases {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, string(escapeMarkdown([]byte(angleBrackets.Replace(s)))), escapeText(s))
	})
}
