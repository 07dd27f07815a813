package extract

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"golang.org/x/net/html"

	"github.com/recrawl/recrawl/extract/internal/quality"
	"github.com/recrawl/recrawl/internal/cputime"
)

// capturedConversion is a tree FromHTML passed to its converter, with the
// options it passed.
type capturedConversion struct {
	root *html.Node
	opts []converter.ConvertOptionFunc
}

// captureConversions runs FromHTML on every page of the docsites corpus
// and keeps a copy of each tree it converts, before the conversion.
func captureConversions(tb testing.TB) []capturedConversion {
	tb.Helper()
	cases, err := quality.LoadDocsites(filepath.Join("testdata", "docsites"))
	if err != nil {
		tb.Fatal(err)
	}
	var out []capturedConversion
	for _, c := range cases {
		_, _ = fromHTML(c.HTML, c.URL, Options{}, func(root *html.Node, opts ...converter.ConvertOptionFunc) ([]byte, error) {
			out = append(out, capturedConversion{cloneTree(root), opts})
			return convert(root, opts...)
		})
	}
	return out
}

// cloneTree is a deep copy of n and the nodes under it, without parent.
func cloneTree(n *html.Node) *html.Node {
	c := &html.Node{Type: n.Type, DataAtom: n.DataAtom, Data: n.Data, Namespace: n.Namespace}
	c.Attr = append([]html.Attribute(nil), n.Attr...)
	for k := n.FirstChild; k != nil; k = k.NextSibling {
		c.AppendChild(cloneTree(k))
	}
	return c
}

// BenchmarkMarkdown measures the Markdown conversion alone (convert) of
// the trees FromHTML converts on the docsites corpus: one op converts all
// of them (copying them is not counted). "cpu-ms/op" is the CPU time of
// the process (garbage collection included) in the conversions, less
// disturbed than the elapsed time by other processes on a loaded machine.
func BenchmarkMarkdown(b *testing.B) {
	convs := captureConversions(b)
	roots := make([]*html.Node, len(convs))
	var cpu time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		for j, c := range convs {
			roots[j] = cloneTree(c.root)
		}
		b.StartTimer()
		c0 := cputime.Process()
		for j, c := range convs {
			if _, err := convert(roots[j], c.opts...); err != nil {
				b.Fatal(err)
			}
		}
		cpu += cputime.Process() - c0
	}
	b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
}
