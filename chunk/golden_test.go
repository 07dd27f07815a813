package chunk_test

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/chunk"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenFile is the JSON form of one golden result.
type goldenFile struct {
	Version string        `json:"version"`
	Chunks  []chunk.Chunk `json:"chunks"`
}

// The golden inputs are split with a small MaxBytes so that packing, list
// cutting and line cutting all show up in the expected output.
var goldenOpts = chunk.Options{SplitLevel: 3, MaxBytes: 600}

func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "golden", "*.md"))
	require.NoError(t, err)
	require.NotEmpty(t, inputs)
	for _, in := range inputs {
		t.Run(filepath.Base(in), func(t *testing.T) {
			src, err := os.ReadFile(in)
			require.NoError(t, err)
			cs := chunk.Split(string(src), goldenOpts)
			checkInvariants(t, string(src), goldenOpts, cs)
			got, err := json.MarshalIndent(goldenFile{Version: chunk.Version(goldenOpts), Chunks: cs}, "", "  ")
			require.NoError(t, err)
			got = append(got, '\n')

			out := strings.TrimSuffix(in, ".md") + ".json"
			if *update {
				require.NoError(t, os.WriteFile(out, got, 0o644))
			}
			want, err := os.ReadFile(out)
			require.NoError(t, err, "missing golden file; run go test ./chunk -run TestGolden -update")
			require.Equal(t, string(want), string(got))
		})
	}
}
