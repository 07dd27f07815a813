package chunk_test

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/chunk"
)

// checkInvariants asserts what Split promises for any input: chunks in
// order, non-overlapping, within bounds, within the size limit, text equal
// to the source range, correct hashes, and only whitespace left uncovered.
func checkInvariants(t testing.TB, src string, opts chunk.Options, chunks []chunk.Chunk) {
	t.Helper()
	max := opts.Effective().MaxBytes
	prevEnd := 0
	for i, c := range chunks {
		require.Equal(t, i, c.Ordinal, "ordinal")
		require.GreaterOrEqual(t, c.Start, prevEnd, "chunk %d overlaps the previous one", i)
		require.Less(t, c.Start, c.End, "chunk %d is empty", i)
		require.LessOrEqual(t, c.End, len(src), "chunk %d ends past the input", i)
		require.Equal(t, src[c.Start:c.End], c.Text, "chunk %d text differs from its range", i)
		require.LessOrEqual(t, len(c.Text), max, "chunk %d exceeds MaxBytes", i)
		require.Equal(t, strings.TrimRight(c.Text, " \t\r\n\f\v"), c.Text, "chunk %d ends with whitespace", i)
		require.NotNil(t, c.Headings, "chunk %d has nil headings", i)
		sum := sha256.Sum256([]byte(c.Text))
		require.Equal(t, hex.EncodeToString(sum[:]), c.TextHash, "chunk %d hash", i)
		requireBlank(t, src[prevEnd:c.Start], "gap before chunk %d", i)
		prevEnd = c.End
	}
	requireBlank(t, src[prevEnd:], "tail after the last chunk")
}

func requireBlank(t testing.TB, s string, msgAndArgs ...any) {
	t.Helper()
	require.Empty(t, strings.Trim(s, " \t\r\n\f\v"), msgAndArgs...)
}

func texts(cs []chunk.Chunk) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Text
	}
	return out
}

func paths(cs []chunk.Chunk) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.HeadingPath()
	}
	return out
}

func TestSplit(t *testing.T) {
	para := func(word string, n int) string { return strings.TrimSpace(strings.Repeat(word+" ", n)) }
	code := "```go\n" + strings.Repeat("fmt.Println(\"x\")\n", 10) + "```" // 180 bytes
	table := "| a | b |\n|---|---|\n" + strings.Repeat("| 1 | 2 |\n", 12)
	table = strings.TrimSpace(table)

	tests := []struct {
		name  string
		src   string
		opts  chunk.Options
		texts []string // expected chunk texts; nil = don't compare
		paths []string // expected heading paths; nil = don't compare
		check func(t *testing.T, src string, cs []chunk.Chunk)
	}{
		{
			name:  "empty",
			src:   "",
			texts: []string{},
		},
		{
			name:  "only whitespace",
			src:   "  \n\n\t\n",
			texts: []string{},
		},
		{
			name:  "headings at the split level start chunks",
			src:   "# A\n\nalpha\n\n## B\n\nbeta\n\n### C\n\ngamma\n\n## D\n\ndelta\n",
			texts: []string{"# A\n\nalpha", "## B\n\nbeta", "### C\n\ngamma", "## D\n\ndelta"},
			paths: []string{"A", "A > B", "A > B > C", "A > D"},
		},
		{
			name:  "deeper headings do not split but move the path",
			src:   "## B\n\nbeta\n\n#### E\n\nepsilon\n\n##### F\n\nphi",
			texts: []string{"## B\n\nbeta\n\n#### E\n\nepsilon\n\n##### F\n\nphi"},
			paths: []string{"B"},
		},
		{
			name:  "split level 4 splits at H4",
			src:   "## B\n\nbeta\n\n#### E\n\nepsilon",
			opts:  chunk.Options{SplitLevel: 4},
			texts: []string{"## B\n\nbeta", "#### E\n\nepsilon"},
			paths: []string{"B", "B > E"},
		},
		{
			name:  "split level 1 keeps H2 sections together",
			src:   "# A\n\nalpha\n\n## B\n\nbeta",
			opts:  chunk.Options{SplitLevel: 1},
			texts: []string{"# A\n\nalpha\n\n## B\n\nbeta"},
		},
		{
			name:  "text before the first heading has an empty path",
			src:   "intro\n\n# A\n\nalpha",
			texts: []string{"intro", "# A\n\nalpha"},
			paths: []string{"", "A"},
		},
		{
			name:  "a sibling heading replaces the deeper path",
			src:   "# A\n\n## B\n\n### C\n\n# Z\n\n## Y",
			paths: []string{"A", "A > B", "A > B > C", "Z", "Z > Y"},
		},
		{
			name: "small paragraphs are packed up to MaxBytes",
			src:  para("aa", 20) + "\n\n" + para("bb", 20) + "\n\n" + para("cc", 20) + "\n\n" + para("dd", 20),
			opts: chunk.Options{MaxBytes: 200},
			texts: []string{
				para("aa", 20) + "\n\n" + para("bb", 20) + "\n\n" + para("cc", 20),
				para("dd", 20),
			},
		},
		{
			name: "a code block that fits is kept whole",
			src:  para("aa", 40) + "\n\n" + code + "\n\nafter",
			opts: chunk.Options{MaxBytes: 200},
			texts: []string{
				para("aa", 40),
				code + "\n\nafter",
			},
		},
		{
			name:  "a table that fits is kept whole",
			src:   para("aa", 20) + "\n\n" + table,
			opts:  chunk.Options{MaxBytes: 160},
			texts: []string{para("aa", 20), table},
		},
		{
			name: "an oversized code block is cut between lines",
			src:  code,
			opts: chunk.Options{MaxBytes: 64},
			check: func(t *testing.T, src string, cs []chunk.Chunk) {
				require.Greater(t, len(cs), 2)
				for _, c := range cs {
					require.True(t, c.End == len(src) || src[c.End] == '\n', "cut inside a line: %q", c.Text)
				}
			},
		},
		{
			name: "an oversized list is cut between items",
			src:  "- " + para("aa", 15) + "\n- " + para("bb", 15) + "\n- " + para("cc", 15) + "\n- " + para("dd", 15) + "\n",
			opts: chunk.Options{MaxBytes: 100},
			texts: []string{
				"- " + para("aa", 15) + "\n- " + para("bb", 15),
				"- " + para("cc", 15) + "\n- " + para("dd", 15),
			},
		},
		{
			name: "a long line is cut after a space",
			src:  para("word", 60),
			opts: chunk.Options{MaxBytes: 100},
			check: func(t *testing.T, src string, cs []chunk.Chunk) {
				require.Len(t, cs, 3)
				for _, c := range cs {
					require.NotContains(t, strings.Fields(c.Text), "wor", "a word was cut")
					for _, f := range strings.Fields(c.Text) {
						require.Equal(t, "word", f)
					}
				}
			},
		},
		{
			name: "text without spaces is cut at character boundaries",
			src:  strings.Repeat("分块边界", 50),
			opts: chunk.Options{MaxBytes: 100},
			check: func(t *testing.T, src string, cs []chunk.Chunk) {
				require.Greater(t, len(cs), 5)
				for _, c := range cs {
					require.True(t, utf8.ValidString(c.Text), "invalid UTF-8 in %q", c.Text)
				}
			},
		},
		{
			name:  "heading path is plain text",
			src:   "## Install *the* `tool` on [Linux](https://example.com/linux)\n\nx",
			paths: []string{"Install the tool on Linux"},
		},
		{
			name:  "setext headings split",
			src:   "Title\n=====\n\nintro\n\nPart\n----\n\nbody",
			texts: []string{"Title\n=====\n\nintro", "Part\n----\n\nbody"},
			paths: []string{"Title", "Title > Part"},
		},
		{
			name:  "CRLF line endings",
			src:   "# A\r\n\r\nalpha\r\n\r\n## B\r\n\r\nbeta\r\n",
			texts: []string{"# A\r\n\r\nalpha", "## B\r\n\r\nbeta"},
		},
		{
			name:  "a heading inside a block quote does not split",
			src:   "# A\n\n> ## quoted\n> text\n\nafter",
			texts: []string{"# A\n\n> ## quoted\n> text\n\nafter"},
		},
		{
			name:  "link reference definitions stay in their chunk",
			src:   "# A\n\nsee [x]\n\n[x]: https://example.com\n\n## B\n\nbeta",
			texts: []string{"# A\n\nsee [x]\n\n[x]: https://example.com", "## B\n\nbeta"},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cs := chunk.Split(tc.src, tc.opts)
			checkInvariants(t, tc.src, tc.opts, cs)
			if tc.texts != nil {
				require.Equal(t, tc.texts, texts(cs))
			}
			if tc.paths != nil {
				require.Equal(t, tc.paths, paths(cs))
			}
			if tc.check != nil {
				tc.check(t, tc.src, cs)
			}
		})
	}
}

func TestSplitIsDeterministic(t *testing.T) {
	src := generatePage(newRand(7), 30)
	a := chunk.Split(src, chunk.Options{})
	b := chunk.Split(src, chunk.Options{})
	require.Equal(t, a, b)
}

func TestVersion(t *testing.T) {
	tests := []struct {
		opts chunk.Options
		want string
	}{
		{chunk.Options{}, "md-heading-v1/L3/1500"},
		{chunk.Options{SplitLevel: 2, MaxBytes: 800}, "md-heading-v1/L2/800"},
		{chunk.Options{SplitLevel: 9, MaxBytes: 3}, "md-heading-v1/L6/16"},
		{chunk.Options{SplitLevel: -1, MaxBytes: -5}, "md-heading-v1/L3/1500"},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, chunk.Version(tc.opts))
	}
}

func TestHeadingsAreNotShared(t *testing.T) {
	src := "# A\n\n" + strings.Repeat("word ", 100)
	cs := chunk.Split(src, chunk.Options{MaxBytes: 100})
	require.Greater(t, len(cs), 1)
	cs[0].Headings[0] = "changed"
	require.Equal(t, "A", cs[1].Headings[0])
}

// Inputs that once made the parser take seconds (deep nesting, unmatched
// brackets) must still produce valid chunks; they run in milliseconds now.
func TestSplitHostileInput(t *testing.T) {
	nested := func(levels int) string {
		var b strings.Builder
		for i := range levels {
			b.WriteString(strings.Repeat(" ", i*2) + "- x\n")
		}
		return b.String()
	}
	tests := map[string]string{
		"nested quotes on one line": strings.Repeat(">", 50000) + " x",
		"nested list markers":       strings.Repeat("- ", 20000) + "x",
		"numbered markers":          strings.Repeat("1. ", 20000) + "x",
		"indentation nesting":       nested(1000),
		"unmatched brackets":        strings.Repeat("[", 50000) + strings.Repeat("]", 50000),
		"unclosed links":            strings.Repeat("[a](", 50000),
		"many headings":             strings.Repeat("# h\n", 20000),
		"heading full of links":     "# " + strings.Repeat("[a](", 20000) + "\n\ntext",
		"long table":                "|a|b|\n|-|-|\n" + strings.Repeat("|1|2|\n", 20000),
		"backticks":                 strings.Repeat("`", 100000) + "x",
		"NUL bytes":                 strings.Repeat("\x00\n", 1000),
	}
	for name, src := range tests {
		t.Run(name, func(t *testing.T) {
			cs := chunk.Split(src, chunk.Options{})
			checkInvariants(t, src, chunk.Options{}, cs)
			require.NotEmpty(t, cs)
			for _, c := range cs {
				for _, h := range c.Headings {
					require.LessOrEqual(t, len(h), 512)
				}
			}
		})
	}
}

// Split shares its parsers between calls; concurrent calls must not race.
func TestSplitConcurrent(t *testing.T) {
	src := generatePage(newRand(3), 10)
	want := chunk.Split(src, chunk.Options{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			assert.Equal(t, want, chunk.Split(src, chunk.Options{}))
		})
	}
	wg.Wait()
}
