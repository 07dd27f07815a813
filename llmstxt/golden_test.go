package llmstxt_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/llmstxt"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden.json from the parser's output")

// golden is what a .golden.json file holds for one corpus document.
type golden struct {
	*llmstxt.File
	// Pages are the URLs File.Pages returns, in order.
	Pages []string `json:"pages"`
}

// corpus returns the paths of the llms.txt documents in testdata.
func corpus(t testing.TB) []string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("testdata", "*.txt"))
	require.NoError(t, err)
	require.Len(t, paths, 38, "testdata holds the 38 corpus files")
	return paths
}

func TestGolden(t *testing.T) {
	for _, path := range corpus(t) {
		name := strings.TrimSuffix(filepath.Base(path), ".txt")
		t.Run(name, func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			f, err := llmstxt.Parse(data)
			require.NoError(t, err)

			g := golden{File: f, Pages: []string{}}
			for _, p := range f.Pages() {
				g.Pages = append(g.Pages, p.URL)
			}
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			enc.SetIndent("", "  ")
			require.NoError(t, enc.Encode(g))

			goldenPath := filepath.Join("testdata", name+".golden.json")
			if *update {
				require.NoError(t, os.WriteFile(goldenPath, buf.Bytes(), 0o644))
			}
			want, err := os.ReadFile(goldenPath)
			require.NoError(t, err, "run go test ./llmstxt -run TestGolden -update to create it")
			require.Equal(t, string(want), buf.String())
		})
	}
}
