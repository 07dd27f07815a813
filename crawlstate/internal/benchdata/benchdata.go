// Package benchdata is what the benchmarks of the crawlstate stores write:
// the URLs of a documentation site, the statistics the engine keeps for a
// page fetched often, and the result it records for a changed page. Each
// store's benchmarks use the same data, so their figures compare.
package benchdata

import (
	"fmt"
	"strings"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
)

// PerSitemap is how many URLs one sitemap file of URLs lists.
const PerSitemap = 2000

// Sitemap is the URL of sitemap file i.
func Sitemap(i int) string {
	return fmt.Sprintf("https://docs.example.com/sitemaps/sitemap-%03d.xml", i)
}

// URLs returns n URLs shaped like a documentation site's, each with a
// sitemap lastmod after lastmod, in an order unrelated to their sort
// order. URL k is listed in Sitemap(k/PerSitemap).
func URLs(n int, lastmod time.Time) []crawlstate.Discovered {
	ds := make([]crawlstate.Discovered, n)
	for i := range ds {
		k := (i * 7919) % n // a permutation when n is not a multiple of 7919
		u := fmt.Sprintf("https://docs.example.com/section-%03d/page-%07d", k%500, k)
		ds[i] = crawlstate.Discovered{URL: u, OriginalURL: u + "/", LastMod: lastmod.Add(time.Duration(k) * time.Second),
			Via: Sitemap(k / PerSitemap)}
	}
	return ds
}

// Stats is what the engine keeps for page k, fetched often, as of t0: a
// full window of 32 checks (schedule.DefaultWindow) with hour-scale
// intervals.
func Stats(k int, t0 time.Time) *crawlstate.Stats {
	recent := make([]crawlstate.Check, 32)
	for j := range recent {
		e := time.Duration(20+(k+j)%30)*time.Hour + time.Duration(k*7919+j)%time.Second
		recent[j] = crawlstate.Check{Elapsed: e, Changed: (k+j)%5 == 0, Modified: e}
		if recent[j].Changed {
			recent[j].Modified = e / 3
		}
	}
	return &crawlstate.Stats{LastChanged: t0.Add(-time.Duration(k) * time.Minute), Elapsed: 800 * time.Hour,
		Recent: recent, LastModified: t0.Add(-time.Hour), ChangeRate: 0.2, Weight: 1.5}
}

// links are the outgoing links of every changed page.
var links = func() []string {
	ls := make([]string, 40)
	for i := range ls {
		ls[i] = fmt.Sprintf("https://docs.example.com/section-%03d/page-%07d", i, i*31)
	}
	return ls
}()

// chunkText is the text of every chunk of a changed page: 1 KiB.
var chunkText = strings.Repeat("The widget pipeline reads its settings from the environment. ", 17)[:1024]

// Changed is the result the engine records for change i of the page u,
// fetched at t0 plus i seconds: statistics, a title, 40 links, 12 chunks
// of 1 KiB and an alert.
func Changed(u string, i int, t0 time.Time) crawlstate.Result {
	at := t0.Add(time.Duration(i) * time.Second)
	chunks := make([]crawlstate.Chunk, 12)
	for j := range chunks {
		chunks[j] = crawlstate.Chunk{Ordinal: j, TextHash: fmt.Sprintf("%064x", i*12+j), RecordID: fmt.Sprintf("rec-%d-%d", i, j),
			HeadingPath: "Guide > Configure", Start: j * 1024, End: (j + 1) * 1024, Text: chunkText}
	}
	return crawlstate.Result{URL: u, At: at, Changed: true, ContentHash: fmt.Sprintf("%064x", i),
		ETag: `"e"`, Interval: time.Hour, NextCheck: at.Add(time.Hour), Stats: Stats(i, t0),
		Title: "Configure", Canonical: u, Links: links, Chunks: chunks, ReplaceChunks: true,
		Alert: &crawlstate.Alert{ID: fmt.Sprintf("alert-%d", i), URL: u, Kind: "changed", CreatedAt: at,
			Payload: []byte(`{"kind":"changed"}`)}}
}
