package sitemap_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/sitemap"
)

var update = flag.Bool("update", false, "rewrite testdata/golden/*.golden from the parser's output")

// goldenLine is one line of a .golden file: an entry, a skipped entry, or
// the final result (kind and error).
type goldenLine struct {
	Loc        string   `json:"loc,omitempty"`
	LastMod    string   `json:"lastmod,omitempty"`
	ChangeFreq string   `json:"changefreq,omitempty"`
	Priority   *float64 `json:"priority,omitempty"`

	Skipped string `json:"skipped,omitempty"`
	Line    int    `json:"line,omitempty"`
	Reason  string `json:"reason,omitempty"`

	Kind  string `json:"kind,omitempty"`
	Error string `json:"error,omitempty"`
}

// render parses a document and describes everything Parse reported, one
// JSON object per line.
func render(t *testing.T, data []byte) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	p := sitemap.Parser{OnSkip: func(e *sitemap.SkipError) {
		require.NoError(t, enc.Encode(goldenLine{Skipped: e.Loc, Line: e.Line, Reason: e.Err.Error()}))
	}}
	kind, err := p.Parse(bytes.NewReader(data), func(e sitemap.Entry) error {
		g := goldenLine{Loc: e.Loc, ChangeFreq: string(e.ChangeFreq)}
		if !e.LastMod.IsZero() {
			require.Equal(t, time.UTC, e.LastMod.Location())
			g.LastMod = e.LastMod.Format(time.RFC3339Nano)
		}
		if e.HasPriority {
			g.Priority = &e.Priority
		}
		return enc.Encode(g)
	})
	final := goldenLine{Kind: kind.String()}
	if err != nil {
		final.Error = err.Error()
	}
	require.NoError(t, enc.Encode(final))
	return buf.String()
}

func TestGolden(t *testing.T) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "golden", "*"))
	require.NoError(t, err)
	n := 0
	for _, path := range inputs {
		if strings.HasSuffix(path, ".golden") {
			continue
		}
		n++
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			got := render(t, data)
			if *update {
				require.NoError(t, os.WriteFile(path+".golden", []byte(got), 0o644))
				return
			}
			want, err := os.ReadFile(path + ".golden")
			require.NoError(t, err, "missing golden file; run go test -run TestGolden -update")
			require.Equal(t, string(want), got)
		})
	}
	require.GreaterOrEqual(t, n, 40, "golden inputs went missing")
}
