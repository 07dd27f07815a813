package quality

import (
	"path/filepath"
	"testing"

	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/stretchr/testify/require"
)

func TestLCS(t *testing.T) {
	require.Equal(t, 0, lcs([]rune(""), []rune("abc")))
	require.Equal(t, 3, lcs([]rune("abc"), []rune("xaybzc")))
	require.Equal(t, 2, lcs([]rune("abcd"), []rune("bd")))
	long := make([]rune, 200)
	for i := range long {
		long[i] = rune('a' + i%7)
	}
	require.Equal(t, 200, lcs(long, append(append([]rune("zz"), long...), 'q')))
	require.Equal(t, 199, lcs(long, long[1:]))
}

func TestScoreDoc(t *testing.T) {
	c := DocCase{
		Title:      "Install",
		Headings:   [][2]any{{1.0, "Install"}, {2.0, "From source"}, {2.0, "With pip"}, {3.0, "Extras"}},
		CodeBlocks: []string{"pip install foo", "make && make install"},
		CodeLangs:  []string{"shell", ""},
		Tables:     [][2]any{{[]any{"Option", "Meaning"}, 2.0}},
		Text:       "Install From source make && make install With pip pip install foo Extras Option Meaning a b",
		NavPhrases: []string{"Home", "API reference"},
	}
	good := "# Install\n\n## From source\n\n```\nmake &&\n  make install\n```\n\n## With pip\n\n```shell\npip install foo\n```\n\n### Extras\n\n| Option | Meaning |\n|---|---|\n| a | b |\n"
	s := ScoreDoc(c, "Install - Foo", good)
	require.Equal(t, DocScore{Title: 1, H1: 1, HeadingRecall: 1, LevelOrder: 1, CodeRecall: 1, LangRecall: 1, TableRecall: 1, F1: 1,
		HasTitle: true, HasHeadings: true, HasLevelOrder: true, HasCode: true, HasLang: true, HasTables: true, HasNav: true}, s)

	// Title only in <title>, two headings and the code blocks lost,
	// one level wrong, the table without its header, the nav leaked.
	bad := "Home · API reference\n\n## From source\n\n### With pip\n\n```\npip install\n```\n\n| a | b |\n|---|---|\n"
	s = ScoreDoc(c, "Install - Foo", bad)
	require.Equal(t, 1.0, s.Title)
	require.Equal(t, 0.0, s.H1)
	require.Equal(t, 0.5, s.HeadingRecall)
	require.Equal(t, 0.0, s.LevelOrder) // same level in truth, deeper in the Markdown
	require.Equal(t, 0.0, s.CodeRecall)
	require.Equal(t, 0.0, s.TableRecall)
	require.Equal(t, 1.0, s.NavLeak)
	require.Less(t, s.F1, 0.8)
}

// TestDocMetricsDiscriminate shows the docsites metrics separate good
// from bad extraction on the real corpus: the ground-truth container,
// converted, meets the targets; whole-page text leaks the navigation;
// nothing scores 0.
func TestDocMetricsDiscriminate(t *testing.T) {
	cases, err := LoadDocsites(filepath.Join("..", "..", "testdata", "docsites"))
	require.NoError(t, err)
	require.Len(t, cases, 284)
	conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(),
		table.NewTablePlugin(table.WithSpanCellBehavior(table.SpanBehaviorMirror))))
	clean := make([]DocScore, len(cases))
	dump := make([]DocScore, len(cases))
	none := make([]DocScore, len(cases))
	for i, c := range cases {
		b, err := c.CleanHTML()
		require.NoError(t, err)
		md, err := conv.ConvertString(string(b), converter.WithDomain(c.URL))
		require.NoError(t, err)
		clean[i] = ScoreDoc(c, "", md)
		text, err := pageText(c.HTML)
		require.NoError(t, err)
		dump[i] = ScoreDoc(c, "", text)
		none[i] = ScoreDoc(c, "", "")
	}
	cm, dm, nm := SummarizeDocs(cases, clean)["all"], SummarizeDocs(cases, dump)["all"], SummarizeDocs(cases, none)["all"]
	t.Logf("clean container: %+v", cm)
	t.Logf("whole-page text: %+v", dm)
	require.GreaterOrEqual(t, cm.HeadingRecall, 0.99)
	require.GreaterOrEqual(t, cm.CodeRecall, 0.99)
	require.GreaterOrEqual(t, cm.F1, 0.99)
	require.LessOrEqual(t, cm.NavLeak, 0.02)
	require.Greater(t, dm.NavLeak, 0.5)
	require.Less(t, dm.F1, 0.9)
	require.Zero(t, nm.HeadingRecall)
	require.Zero(t, nm.H1)
	require.Zero(t, nm.F1)
}

// TestCaseOf: a hand-written truth scores like the corpus's own, levels
// as JSON numbers and tables by their header cells.
func TestCaseOf(t *testing.T) {
	c := CaseOf("Queues", [][2]any{{1, "Queues"}, {2, "Durable"}}, []string{"q.push(1)"}, [][]string{{"Option", "Default"}}, []string{"Home"})
	md := "# Queues\n\n## Durable\n\n```\nq.push(1)\n```\n\n| Option | Default |\n|---|---|\n| a | b |\n"
	s := ScoreDoc(c, "Queues", md)
	require.Equal(t, DocScore{Title: 1, H1: 1, HeadingRecall: 1, LevelOrder: 1, CodeRecall: 1, TableRecall: 1, F1: s.F1,
		HasTitle: true, HasHeadings: true, HasLevelOrder: true, HasCode: true, HasTables: true, HasNav: true}, s)
	require.Equal(t, 1.0, ScoreDoc(c, "Queues", md+"\nHome\n").NavLeak)
}
