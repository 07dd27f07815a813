package fingerprint_test

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/fingerprint"
)

// loadArticles reads the article bodies of testdata/articles.json.gz (see
// testdata/README.md), keyed by page id.
func loadArticles(t testing.TB) map[string]string {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", "articles.json.gz"))
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	var articles map[string]string
	require.NoError(t, json.NewDecoder(zr).Decode(&articles))
	return articles
}

// TestDefaultOnRealArticles measures false positives: the 181 article bodies
// of the extraction benchmark are static text, so everything Default strips
// from them (beyond white space) is listed in a golden file for review.
func TestDefaultOnRealArticles(t *testing.T) {
	articles := loadArticles(t)
	require.Len(t, articles, 181)
	ids := make([]string, 0, len(articles))
	for id := range articles {
		ids = append(ids, id)
	}
	sort.Strings(ids)

	ws := fingerprint.Rules{fingerprint.Default[len(fingerprint.Default)-1]}
	require.Equal(t, "whitespace-runs", ws[0].Name)

	var report strings.Builder
	touched, fragments, bytesIn := 0, 0, 0
	for _, id := range ids {
		body := articles[id]
		bytesIn += len(body)
		if fingerprint.Strip(body) == ws.Strip(body) {
			continue
		}
		touched++
		base := ws.Strip(body)
		for _, r := range fingerprint.Default[:len(fingerprint.Default)-1] {
			if r.Pattern != nil {
				for _, m := range r.Pattern.FindAllString(base, -1) {
					fragments++
					fmt.Fprintf(&report, "%s %s: %q\n", id[:8], r.Name, m)
				}
				continue
			}
			kept := map[string]int{}
			for _, l := range strings.Split(fingerprint.Rules{r}.Strip(base), "\n") {
				kept[l]++
			}
			for _, l := range strings.Split(base, "\n") {
				if kept[l] > 0 {
					kept[l]--
					continue
				}
				fragments++
				fmt.Fprintf(&report, "%s %s: line %q\n", id[:8], r.Name, l)
			}
		}
	}
	header := fmt.Sprintf("# Default on %d real articles (%d bytes): %d touched, %d fragments matched.\n"+
		"# Each line: page id, rule, the whole match (clock-after-cue and tokens keep their cue or key).\n",
		len(ids), bytesIn, touched, fragments)
	golden(t, "articles.golden", header+report.String())
	t.Logf("%d of %d articles touched, %d fragments", touched, len(ids), fragments)
	// Static prose must come through nearly untouched.
	require.LessOrEqual(t, touched, len(ids)/20)
}

// The line filters of Default change nothing but speed. The whole-text
// patterns are slow on long texts, so this uses the first 40 articles;
// FuzzLineFilters explores further.
func TestLineFiltersMatchWholeTextPatterns(t *testing.T) {
	plain := plainDefault()
	texts := []string{readFile(t, "page_run1.md"), readFile(t, "page_run2.md"), hostilePage(8 << 10)}
	articles := loadArticles(t)
	ids := make([]string, 0, len(articles))
	for id := range articles {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids[:40] {
		texts = append(texts, articles[id])
	}
	for _, text := range texts {
		require.Equal(t, plain.Strip(text), fingerprint.Default.Strip(text))
	}
}
