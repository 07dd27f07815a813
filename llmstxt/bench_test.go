package llmstxt_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/recrawl/recrawl/llmstxt"
)

// largestCorpusFile returns the biggest llms.txt file in testdata.
func largestCorpusFile(b *testing.B) (string, []byte) {
	b.Helper()
	var name string
	var data []byte
	for _, p := range corpus(b) {
		d, err := os.ReadFile(p)
		if err != nil {
			b.Fatal(err)
		}
		if len(d) > len(data) {
			name, data = filepath.Base(p), d
		}
	}
	return name, data
}

func benchParse(b *testing.B, data []byte) {
	b.Helper()
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		f, err := llmstxt.Parse(data)
		if err != nil {
			b.Fatal(err)
		}
		if len(f.Pages()) == 0 {
			b.Fatal("no pages")
		}
	}
}

// BenchmarkParse parses the largest corpus file (Anthropic's llms.txt) and
// lists its pages.
func BenchmarkParse(b *testing.B) {
	name, data := largestCorpusFile(b)
	b.Logf("%s: %d bytes", name, len(data))
	benchParse(b, data)
}

// BenchmarkParseLargeList parses a synthetic 20000-entry index (about
// 1.3 MB), the size of the biggest documentation sites.
func BenchmarkParseLargeList(b *testing.B) {
	var s strings.Builder
	s.WriteString("# Big site\n\n> Every page.\n\n## Docs\n\n")
	for i := range 20000 {
		fmt.Fprintf(&s, "- [Page %d](https://docs.example.com/section/page-%d.md): What page %d is about\n", i, i, i)
	}
	benchParse(b, []byte(s.String()))
}

// BenchmarkWorstAccepted measures inputs built to be as slow as the guard
// lets through: each is just inside its limit, repeated to 1 MiB.
func BenchmarkWorstAccepted(b *testing.B) {
	const size = 1 << 20
	repeat := func(head, unit string) []byte {
		return []byte(head + strings.Repeat(unit, (size-len(head))/len(unit)))
	}
	cases := []struct {
		name string
		data []byte
	}{
		{"nesting", repeat("# T\n\n", strings.Repeat("> ", llmstxt.MaxNesting)+"[a](/a)\n")},
		{"unclosed-destinations", repeat("# T\n\n", "[a]([a]([a]([a](\n\n")},
		{"definition-runs", repeat("# T\n\n", strings.Repeat("[ab]:b\n", 300)+"\n")},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			if _, err := llmstxt.Parse(c.data); err != nil {
				b.Fatalf("input is rejected, not just inside the limit: %v", err)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				if _, err := llmstxt.Parse(c.data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
