package fingerprint_test

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/recrawl/recrawl/fingerprint"
)

// benchPage builds a ~50 KB Markdown page from real article text, with the
// volatile blocks a crawled page carries: navigation with a CSRF token,
// timestamps, a code block, clocks, a "Related posts" list and a footer.
func benchPage(b *testing.B) string {
	b.Helper()
	articles := loadArticles(b)
	ids := make([]string, 0, len(articles))
	for id := range articles {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var p strings.Builder
	p.WriteString("* [Home](/)\n* [Account](/account?csrf_token=9f86d081884c7d659a2f)\n\n# Weekly digest\n\n")
	p.WriteString("*Last updated 2026-05-01T10:00:00Z*\n\n")
	for i, id := range ids {
		if p.Len() >= 50<<10 {
			break
		}
		fmt.Fprintf(&p, "## Story %d\n\n*2026-04-%02d 08:%02d · %d hours ago*\n\n", i+1, i%28+1, i%60, i+1)
		p.WriteString(articles[id])
		p.WriteString("\n\n```text\nrequest id 7f3a  served at 14:02:11\n```\n\n")
	}
	p.WriteString("### Related posts\n\n* [One](/1)\n* [Two](/2)\n\n## Footer\n\nGenerated at 14:02:11 UTC · session_id: 5b3c1f0a9e\n")
	return p.String()
}

func BenchmarkOf(b *testing.B) {
	page := benchPage(b)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		fingerprint.Default.Of(page)
	}
}

// BenchmarkOfNoRules is the floor: line trimming and SHA-256 only.
func BenchmarkOfNoRules(b *testing.B) {
	page := benchPage(b)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		fingerprint.Rules(nil).Of(page)
	}
}

// BenchmarkRule measures each Default rule alone on the same page.
func BenchmarkRule(b *testing.B) {
	page := benchPage(b)
	for _, r := range fingerprint.Default {
		b.Run(r.Name, func(b *testing.B) {
			rs := fingerprint.Rules{r}
			b.SetBytes(int64(len(page)))
			b.ReportAllocs()
			for b.Loop() {
				rs.Strip(page)
			}
		})
	}
}

func BenchmarkOfHostile(b *testing.B) {
	page := hostilePage(1 << 20)
	b.SetBytes(int64(len(page)))
	b.ReportAllocs()
	for b.Loop() {
		fingerprint.Default.Of(page)
	}
}
