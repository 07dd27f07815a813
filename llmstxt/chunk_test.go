package llmstxt

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Parsing in pieces gives the File a whole parse gives, for every real
// file and hand-made edge case, with a cut at every possible place.
func TestChunkedParseEqualsWholeParse(t *testing.T) {
	files, err := filepath.Glob("testdata/*.txt")
	require.NoError(t, err)
	corpus, _ := filepath.Glob("/work/shared/corpus/llmstxt/files/*.txt")
	files = append(files, corpus...)
	docs := map[string]string{}
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		docs[filepath.Base(f)] = string(b)
	}
	docs["edge cases"] = "# Edge\n\n> Summary [s](/s)\n\nDetails with [ref][r] and [later][l].\n\n" +
		"- [a](/a): first\n- [b](/b) - second\n* [c](/c)\n+ [d][r]\n\n" +
		"```\n- [not a link](/code)\n# not a heading\n```\n\n" +
		"<!--\n- [hidden](/hidden)\n\n# hidden heading\n-->\n\n" +
		"<div>\n- [in html](/html)\n</div>\n\n" +
		"## Docs\n\n- [e](/e)\n  - [nested](/nested)\n- [f](/f)\n\n[r]: /ref \"Ref\"\n\n" +
		"## Optional\n\nSetext\n---\n\n- [g](/g)\n- - -\n- [h][l]\n\n[l]:\n  /late\n  'Late'\n" +
		"\n## Lazy\n\nA paragraph\n[p]: /not-a-definition\n\n- item\n[q]: /neither\n\n- [see][p] and [also][q]\n" +
		"\n## Quotes\n\n- [quoted][bq] [nested][nq] [para][cq] [code][kq] [lazy][lq]\n\n> note\n>\n> [bq]: /bq\n\n> > [nq]:\n> > /nq\n\n" +
		"> text\n> [cq]: /not-cq\n\n> ```\n>\n> [kq]: /not-kq\n> ```\n\n> para\nlazy\n> [lq]: /not-lq\n"
	for name, doc := range docs {
		t.Run(name, func(t *testing.T) {
			whole, werr := Parser{}.parse([]byte(doc), 1<<40, 0)
			pieces, perr := Parser{}.parse([]byte(doc), 0, 1)
			if werr != nil {
				require.Equal(t, werr.Error(), perr.Error())
				return
			}
			require.NoError(t, perr)
			require.Equal(t, whole, pieces)
			if name == "edge cases" {
				bounds, _ := chunkBounds([]byte(doc), 1)
				require.Greater(t, len(bounds), 10, "the document was cut")
				require.NotContains(t, urls(pieces), "/code")
				require.NotContains(t, urls(pieces), "/hidden")
				require.Contains(t, urls(pieces), "/ref")
				require.Contains(t, urls(pieces), "/late")
				require.NotContains(t, urls(pieces), "/not-a-definition", "a paragraph's continuation defines nothing")
				require.NotContains(t, urls(pieces), "/neither")
				require.Contains(t, urls(pieces), "/bq")
				require.Contains(t, urls(pieces), "/nq")
				for _, not := range []string{"/not-cq", "/not-kq", "/not-lq"} {
					require.NotContains(t, urls(pieces), not)
				}
			}
		})
	}
}

func urls(f *File) string {
	var b strings.Builder
	for _, p := range f.Pages() {
		b.WriteString(p.URL + " ")
	}
	return b.String()
}
