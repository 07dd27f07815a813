package extract_test

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/extract"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

// goldenCase is one page under testdata/golden: <name>.html is the input,
// <name>.golden the expected Document (or error) in the format of render.
type goldenCase struct {
	name        string
	url         string
	contentType string
	wantErr     error
}

var goldenCases = []goldenCase{
	// An article with site header, navigation, search form, share bar,
	// related stories, newsletter form, footer and a consent banner.
	{"article", "https://courier.example/news/2024/03/marrow-ford-ferry", "text/html; charset=utf-8", nil},
	// Documentation pages: sidebar, breadcrumbs, table of contents,
	// highlighted code, tables and admonitions.
	{"docusaurus", "https://harborqueue.dev/docs/configuration", "text/html; charset=utf-8", nil},
	{"sphinx", "https://tidepool.readthedocs.io/en/stable/usage/quickstart.html", "text/html", nil},
	{"mkdocs", "https://squall.example.org/guide/deploy/", "", nil},
	// Client-side rendered shells.
	{"spa-root", "https://app.ledgerly.example/reports", "text/html", extract.ErrScriptRendered},
	{"noscript-enable-js", "https://brightwave.example/pricing", "text/html", extract.ErrScriptRendered},
	// A real page with analytics pixels and a "enable JavaScript for
	// comments" notice in <noscript>: accepted.
	{"analytics-noscript", "https://crumbandcrust.example/guides/starter-ratios", "text/html", nil},
	// Legacy encodings declared only by <meta>.
	{"windows-1252", "https://cuisine.example/recettes/crepes", "text/html", nil},
	{"shift_jis", "https://memo.example.jp/2024/incremental", "", nil},
	// <base href>, relative canonical with fragment, every kind of link.
	{"links", "https://example.com/handbook/release", "", nil},
	// Nothing but navigation and footer.
	{"empty", "https://example.com/empty", "", extract.ErrEmpty},
}

func TestGolden(t *testing.T) {
	for _, tc := range goldenCases {
		t.Run(tc.name, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", "golden", tc.name+".html"))
			require.NoError(t, err)
			doc, err := extract.FromHTMLWithType(body, tc.url, tc.contentType)
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.Empty(t, doc.Markdown)
			} else {
				require.NoError(t, err)
				require.NotEmpty(t, doc.Markdown)
			}
			got := render(doc, err)
			path := filepath.Join("testdata", "golden", tc.name+".golden")
			if *update {
				require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test -run TestGolden -update to create it")
			require.Equal(t, string(want), got)
		})
	}
}

// render writes a Document and error in the golden file format.
func render(d extract.Document, err error) string {
	var b strings.Builder
	errText := ""
	if err != nil {
		errText = err.Error()
	}
	fmt.Fprintf(&b, "error: %s\ntitle: %s\ncanonical: %s\nlang: %s\ndescription: %s\nlinks:\n",
		errText, d.Title, d.Canonical, d.Lang, d.Description)
	for _, l := range d.Links {
		fmt.Fprintf(&b, "  %s\n", l)
	}
	fmt.Fprintf(&b, "markdown:\n%s\n", d.Markdown)
	return b.String()
}

func readGolden(t *testing.T, name string) extract.Document {
	t.Helper()
	for _, tc := range goldenCases {
		if tc.name != name {
			continue
		}
		body, err := os.ReadFile(filepath.Join("testdata", "golden", name+".html"))
		require.NoError(t, err)
		doc, err := extract.FromHTMLWithType(body, tc.url, tc.contentType)
		if tc.wantErr == nil {
			require.NoError(t, err)
		} else if !errors.Is(err, tc.wantErr) {
			t.Fatalf("%s: got error %v, want %v", name, err, tc.wantErr)
		}
		return doc
	}
	t.Fatalf("no golden case %q", name)
	return extract.Document{}
}
