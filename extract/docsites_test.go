package extract_test

import (
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/extract"
	"github.com/recrawl/recrawl/extract/internal/quality"
)

// docsTargets are the least FromHTML must score on the docsites corpus
// (testdata/docsites, metrics defined in its README.md), overall; nav
// leakage is the most it may show.
var docsTargets = quality.DocMetrics{
	H1: 0.98, HeadingRecall: 0.97, LevelOrder: 0.98, CodeRecall: 0.97,
	TableRecall: 0.95, F1: 0.97, NavLeak: 0.02,
}

func loadDocsites(tb testing.TB) []quality.DocCase {
	tb.Helper()
	cases, err := quality.LoadDocsites(filepath.Join("testdata", "docsites"))
	require.NoError(tb, err)
	require.Len(tb, cases, 284)
	return cases
}

// scoreDocsites extracts every case concurrently with FromHTML and scores
// it; the title must be the Markdown's first line, as an H1 (issue 11,
// deliverable 2).
func scoreDocsites(t *testing.T, cases []quality.DocCase) []quality.DocScore {
	return scoreDocsitesWith(t, cases, func(c *quality.DocCase) (extract.Document, error) {
		doc, err := extract.FromHTML(c.HTML, c.URL)
		if err == nil && !strings.HasPrefix(doc.Markdown, "# ") {
			t.Errorf("%s %s: the Markdown does not start with the page title: %.80q", c.Site, c.File, doc.Markdown)
		}
		return doc, err
	})
}

// scoreDocsitesWith extracts every case concurrently with from and scores
// it; from must not fail.
func scoreDocsitesWith(t *testing.T, cases []quality.DocCase, from func(*quality.DocCase) (extract.Document, error)) []quality.DocScore {
	scores := make([]quality.DocScore, len(cases))
	work := make(chan int)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				c := &cases[i]
				doc, err := from(c)
				if err != nil {
					t.Errorf("%s %s: %v", c.Site, c.File, err)
				}
				scores[i] = quality.ScoreDoc(*c, doc.Title, doc.Markdown)
			}
		}()
	}
	for i := range cases {
		work <- i
	}
	close(work)
	wg.Wait()
	return scores
}

// splitShort divides cases and their scores into the content pages and
// the short ones.
func splitShort(cases []quality.DocCase, scores []quality.DocScore) (long, short []quality.DocCase, longScores, shortScores []quality.DocScore) {
	for i, c := range cases {
		if c.Short {
			short = append(short, c)
			shortScores = append(shortScores, scores[i])
		} else {
			long = append(long, c)
			longScores = append(longScores, scores[i])
		}
	}
	return long, short, longScores, shortScores
}

// TestDocsitesQuality scores FromHTML on the 284 pages of the docsites
// corpus and enforces docsTargets overall and on the short pages.
func TestDocsitesQuality(t *testing.T) {
	cases := loadDocsites(t)
	scores := scoreDocsites(t, cases)
	ms := quality.SummarizeDocs(cases, scores)
	t.Logf("docsites, per generator:\n%s", quality.FormatDocMetrics(ms))
	long, short, longScores, shortScores := splitShort(cases, scores)
	t.Logf("the 244 content pages, per generator:\n%s", quality.FormatDocMetrics(quality.SummarizeDocs(long, longScores)))
	sm := quality.SummarizeDocs(short, shortScores)["all"]
	t.Logf("short pages: %+v", sm)
	meets(t, "all pages", ms["all"], docsTargets)
	meets(t, "short pages", sm, docsTargets)
}

// meets fails the test when m is below want on a metric want sets (zero
// means unset) or above its nav leakage.
func meets(t *testing.T, what string, m, want quality.DocMetrics) {
	t.Helper()
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"h1", m.H1, want.H1},
		{"heading recall", m.HeadingRecall, want.HeadingRecall},
		{"level order", m.LevelOrder, want.LevelOrder},
		{"code-block recall", m.CodeRecall, want.CodeRecall},
		{"table recall", m.TableRecall, want.TableRecall},
		{"token F1", m.F1, want.F1},
	} {
		require.GreaterOrEqualf(t, c.got, c.want, "%s: %s %.3f below the target %.3f", what, c.name, c.got, c.want)
	}
	require.LessOrEqualf(t, m.NavLeak, want.NavLeak, "%s: nav leakage %.3f above %.3f", what, m.NavLeak, want.NavLeak)
}
