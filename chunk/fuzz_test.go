package chunk_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/recrawl/recrawl/chunk"
)

// FuzzSplit checks Split's promises on arbitrary input: it never panics,
// and its chunks are ordered, non-overlapping, within bounds and the size
// limit, and leave only whitespace uncovered.
func FuzzSplit(f *testing.F) {
	seeds := []string{
		"",
		"# A\n\nalpha\n\n## B\n\nbeta",
		"```\nunclosed fence\n# not a heading",
		"| a | b |\n|---|---|\n| 1 | 2 |",
		"- a\n  - b\n    - c\n\n> > quote\n\n    indented code",
		"Setext\n===\n\n[ref]: /url\n\n<div>\nhtml\n</div>",
		"# A\r\n\r\nalpha\r\n",
		"分块边界分块边界分块边界分块边界分块边界分块边界",
		"\xff\xfe\x00 broken \x80 utf-8",
	}
	if golden, err := filepath.Glob(filepath.Join("testdata", "golden", "*.md")); err == nil {
		for _, g := range golden {
			if b, err := os.ReadFile(g); err == nil && len(b) < 4096 {
				seeds = append(seeds, string(b))
			}
		}
	}
	for i, s := range seeds {
		f.Add(s, i%5, 16+i*40)
	}
	f.Fuzz(func(t *testing.T, src string, level, maxBytes int) {
		opts := chunk.Options{SplitLevel: level % 8, MaxBytes: maxBytes % 4096}
		checkInvariants(t, src, opts, chunk.Split(src, opts))
	})
}
