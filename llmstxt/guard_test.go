package llmstxt_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/llmstxt"
)

func TestMaxBytes(t *testing.T) {
	doc := []byte("# T\n\n- [A](/a)\n")
	p := llmstxt.Parser{MaxBytes: len(doc)}
	f, err := p.Parse(doc)
	require.NoError(t, err, "a document of exactly MaxBytes is accepted")
	require.Equal(t, "T", f.Title)

	p.MaxBytes = len(doc) - 1
	_, err = p.Parse(doc)
	require.ErrorIs(t, err, llmstxt.ErrTooLarge)
	var fe *llmstxt.FormatError
	require.ErrorAs(t, err, &fe)
	require.Contains(t, fe.Detail, fmt.Sprintf("%d bytes", len(doc)))
	require.Contains(t, fe.Detail, "Parser.MaxBytes")

	big := make([]byte, llmstxt.DefaultMaxBytes+1)
	copy(big, "# Big\n")
	_, err = llmstxt.Parse(big)
	require.ErrorIs(t, err, llmstxt.ErrTooLarge, "Parse applies DefaultMaxBytes")
}

func TestBinaryInput(t *testing.T) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	_, err := w.Write([]byte("# Compressed\n\n- [A](/a)\n"))
	require.NoError(t, err)
	require.NoError(t, w.Close())

	utf16 := []byte{0xff, 0xfe}
	for _, r := range "# Title\n" {
		utf16 = append(utf16, byte(r), 0)
	}

	tests := []struct {
		name string
		data []byte
		msg  string
	}{
		{"gzip", gz.Bytes(), "gzip"},
		{"UTF-16", utf16, "UTF-16"},
		{"NUL", []byte("# Title\n\x00\n- [A](/a)\n"), "NUL byte at offset 8"},
		{"control bytes", []byte("# T\x01\x02\x03\x04\x05\x06\x07\x08\n"), "control characters"},
		{"PNG", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), "NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := llmstxt.Parse(tt.data)
			require.ErrorIs(t, err, llmstxt.ErrBinary)
			require.Contains(t, err.Error(), tt.msg)
		})
	}
	// Escape sequences and form feeds are text.
	f, err := llmstxt.Parse([]byte("# T\f\n\x1b[1mbold\x1b[0m\n"))
	require.NoError(t, err)
	require.Equal(t, "T", f.Title)
}

// stairs nests list items by indentation, one level per line.
func stairs(levels int) string {
	var b strings.Builder
	b.WriteString("# T\n\n")
	for i := range levels {
		b.WriteString(strings.Repeat("  ", i) + "- [item](/i)\n")
	}
	return b.String()
}

func TestTooComplex(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		name string
		doc  string
	}{
		{"nested blockquotes", "# T\n\n" + strings.Repeat("> ", 40) + "deep\n"},
		{"nested blockquotes, a megabyte", "# T\n\n" + strings.Repeat("> ", mib/2) + "\n"},
		{"nested ordered lists", "# T\n\n" + strings.Repeat("1. ", 40) + "deep\n"},
		{"mixed nesting", "# T\n\n" + strings.Repeat("> - ", 20) + "deep\n"},
		{"list stairs", stairs(70)},
		{"unclosed destinations on one line", "# T\n\n" + strings.Repeat("[a](", mib/4) + "\n"},
		{"unclosed image destinations", "# T\n\n" + strings.Repeat("![a](", mib/5) + "\n"},
		{"unclosed angle destinations", "# T\n\n" + strings.Repeat("[a](<b ", mib/7) + "\n"},
		{"unclosed destinations in a heading", "# T\n\n## " + strings.Repeat("[a](", mib/4) + "\n"},
		{"reference definition run", "# T\n\n" + strings.Repeat("[ab]:b\n", mib/7)},
		{"label lookups in one paragraph", "# T\n\na\n" + strings.Repeat("[ab]:b\n", mib/7)},
		{"brackets then closers", "# T\n\n" + strings.Repeat("[", mib/2) + strings.Repeat("]", mib/2) + "\n"},
		{"empty definitions", "# T\n\n" + strings.Repeat("[x]:\n", mib/5)},
		{"unclosed titles across lines", "# T\n\n" + strings.Repeat("[a](b \"\n", mib/8)},
		{"unclosed parenthesised titles", "# T\n\n" + strings.Repeat("[a](b (\n", mib/8)},
		{"titles without closing parenthesis", "# T\n\n" + strings.Repeat("[a](b \"x\" \n", mib/12)},
		{"unclosed image titles", "# T\n\n" + strings.Repeat("a ![b](c '\n", mib/11)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := llmstxt.Parse([]byte(tt.doc))
			require.ErrorIs(t, err, llmstxt.ErrTooComplex)
			var fe *llmstxt.FormatError
			require.ErrorAs(t, err, &fe)
			require.NotEmpty(t, fe.Detail)
		})
	}
}

func TestLargeOrdinaryDocumentsPass(t *testing.T) {
	var list, para, defs, code, titled, oneLine strings.Builder
	list.WriteString("# Big list\n\n## Docs\n\n")
	for i := range 20000 {
		fmt.Fprintf(&list, "- [Page %d [beta]](/docs/page-%d.md): [Legacy] description of page %d\n", i, i, i)
	}
	para.WriteString("# Paragraph of links\n\n")
	for i := range 5000 {
		fmt.Fprintf(&para, "[Page %d](/p/%d) see also\n", i, i)
	}
	defs.WriteString("# References\n\n## Docs\n\n")
	for i := range 2000 {
		fmt.Fprintf(&defs, "- [Page %d][p%d]\n", i, i)
	}
	defs.WriteString("\n")
	for i := range 2000 {
		fmt.Fprintf(&defs, "[p%d]: /ref/%d\n", i, i)
	}
	code.WriteString("# Code\n\n```js\n")
	for i := range 20000 {
		fmt.Fprintf(&code, "x[%d] = f[%d](g[%d]) // [not](a link)\n", i, i, i)
	}
	code.WriteString("```\n\n## Docs\n- [Real](/real)\n")
	titled.WriteString("# Titled links\n\n")
	for i := range 3000 {
		fmt.Fprintf(&titled, "[Read %d](/r/%d \"Read page %d\")\n", i, i, i)
	}
	titled.WriteString("[Split](/split\n\"title on the next line\")\n")
	oneLine.WriteString("# One line\n\n")
	for i := range 20000 {
		fmt.Fprintf(&oneLine, "[%d](/l/%d)", i, i)
	}
	oneLine.WriteString("\n")

	tests := []struct {
		name  string
		doc   string
		pages int
	}{
		{"20000-entry list with brackets", list.String(), 20000},
		{"5000-line paragraph of links", para.String(), 5000},
		{"2000 reference links", defs.String(), 2000},
		{"20000-line code block", code.String(), 1},
		{"20000 links on one line", oneLine.String(), 20000},
		{"3000-line paragraph of titled links", titled.String(), 3001},
		{"nesting at the limit", "# T\n\n" + strings.Repeat("> ", llmstxt.MaxNesting) + "[deep](/deep)\n", 1},
		{"list stairs within the limit", stairs(llmstxt.MaxNesting / 2), 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, err := llmstxt.Parse([]byte(tt.doc))
			require.NoError(t, err)
			require.Len(t, f.Pages(), tt.pages)
		})
	}
}
