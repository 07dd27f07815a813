package sim

import (
	"fmt"
	"strings"

	"github.com/recrawl/recrawl/schedule"
)

// Class is a share of a mix's pages and how their content changes.
type Class struct {
	// Name labels the class in reports.
	Name string
	// Share is the fraction of pages in the class; a mix's shares are
	// normalised to sum to 1.
	Share float64
	// Rate is the content change rate (changes per day); 0 is a page whose
	// content never changes.
	Rate schedule.Rate
	// Sigma, when positive, makes each page's rate log-normal: the rate is
	// Rate·e^(Sigma·Z) with Z standard normal.
	Sigma float64
	// Weight is the importance of the class's pages (0: 1): the crawler
	// is told it (schedule.Page.Weight) and Result.Freshness weighs each
	// page's fresh time by it.
	Weight float64
	// Volatile pages carry markup that changes on every fetch (a build
	// stamp, a request id) while their content stays the same: the
	// fingerprint must see no change.
	Volatile bool
}

// Mix is a population of pages.
type Mix struct {
	// Name is the mix's short name (A, B, C).
	Name string
	// Classes partition the pages.
	Classes []Class
	// ReliableLastModified is the fraction of non-volatile pages whose
	// origin sends a Last-Modified equal to the time of the last content
	// change. Volatile pages send the fetch time (a dynamic page); the rest
	// send none.
	ReliableLastModified float64
	// SitemapHonest and SitemapGenerated are the fractions of pages whose
	// sitemap entry carries a lastmod: the time of the page's last content
	// change, and the sitemap's generation time (the crawler's run) on
	// every entry. The rest list no lastmod. Each kind is listed by a
	// sitemap source of its own, whose lastmod trust a learning crawler
	// measures apart (Known.Source). Both zero (mixes A to C): the site
	// has no sitemap lastmods.
	SitemapHonest, SitemapGenerated float64
	// Releases, when set, groups the pages in sections by URL path and
	// adds release bursts: each section releases as a Poisson process of
	// its own, and a release changes a random share of the section's
	// pages at once. The classes' rates are then the pages' changes
	// alone, between releases. Without it (mixes A to L) the pages still
	// sit in sections of a URL path, but every change is a page's own.
	Releases *Releases
}

// Releases describes the release bursts of a mix: section sizes, how often
// each section releases and how much of it a release rewrites.
type Releases struct {
	// MinSize and MaxSize bound a section's pages: each size is drawn
	// log-uniformly between them.
	MinSize, MaxSize int
	// MinRate and MaxRate bound a section's releases per day: each
	// section's rate is drawn log-uniformly between them.
	MinRate, MaxRate schedule.Rate
	// MinShare and MaxShare bound the share of a section's live pages one
	// release changes: each release draws its share uniformly between them
	// and changes that many of the section's pages, picked at random.
	MinShare, MaxShare float64
}

// MixA is a realistic mix of fixed rates: 23% of pages change daily, 15%
// every 4 days, 16% every 15 days, 16% every 60 days, 30% yearly.
var MixA = Mix{
	Name: "A",
	Classes: []Class{
		{Name: "daily", Share: 0.23, Rate: 1},
		{Name: "4 days", Share: 0.15, Rate: 1.0 / 4},
		{Name: "15 days", Share: 0.16, Rate: 1.0 / 15},
		{Name: "60 days", Share: 0.16, Rate: 1.0 / 60},
		{Name: "yearly", Share: 0.30, Rate: 1.0 / 365},
	},
	ReliableLastModified: 0.4,
}

// MixB is half static pages; the other half change about once a month,
// log-normally spread (σ = 1: the middle two thirds between once in 11
// days and once in 82 days).
var MixB = Mix{
	Name: "B",
	Classes: []Class{
		{Name: "static", Share: 0.5},
		{Name: "~30 days", Share: 0.5, Rate: 1.0 / 30, Sigma: 1},
	},
	ReliableLastModified: 0.4,
}

// MixC is MixA (97%) plus 2% of pages whose volatile markup changes on
// every fetch while their content never does, and 1% that change hourly.
var MixC = Mix{
	Name: "C",
	Classes: append(scaled(MixA.Classes, 0.97),
		Class{Name: "volatile markup", Share: 0.02, Volatile: true},
		Class{Name: "hourly", Share: 0.01, Rate: 24},
	),
	ReliableLastModified: 0.4,
}

// MixL is MixA's pages listed by three sitemap sources: 40% with honest
// lastmods (the time of the last change), 30% with the sitemap's
// generation time on every URL, 30% with none.
var MixL = Mix{
	Name:                 "L",
	Classes:              MixA.Classes,
	ReliableLastModified: 0.4,
	SitemapHonest:        0.4,
	SitemapGenerated:     0.3,
}

// MixR is a documentation site that changes in release bursts: its pages
// sit in sections of 10 to 400 pages (by URL path), each section releases
// once every week to once every two months, and a release rewrites 10–60%
// of the section's pages at once. Some pages also change alone, between
// releases: 2% daily (changelogs, news) and 18% about once a month; the
// rest change only when a release rewrites them. Its sitemap lists no
// lastmod; MixRHonest and MixRGenerated are
// the same site behind an honest sitemap and one that stamps its
// generation time on every URL.
var MixR = Mix{
	Name: "R",
	Classes: []Class{
		{Name: "daily", Share: 0.02, Rate: 1},
		{Name: "monthly", Share: 0.18, Rate: 1.0 / 30},
		{Name: "releases only", Share: 0.80},
	},
	ReliableLastModified: 0.4,
	Releases: &Releases{
		MinSize: 10, MaxSize: 400,
		MinRate: 1.0 / 60, MaxRate: 1.0 / 7,
		MinShare: 0.1, MaxShare: 0.6,
	},
}

// MixRHonest is MixR behind a sitemap whose every lastmod is the time of
// the page's last change.
var MixRHonest = withSitemap(MixR, "R-honest", 1, 0)

// MixRGenerated is MixR behind a sitemap that stamps its generation time
// on every URL.
var MixRGenerated = withSitemap(MixR, "R-generated", 0, 1)

func withSitemap(m Mix, name string, honest, generated float64) Mix {
	m.Name, m.SitemapHonest, m.SitemapGenerated = name, honest, generated
	return m
}

func scaled(cs []Class, k float64) []Class {
	out := make([]Class, len(cs))
	for i, c := range cs {
		c.Share *= k
		out[i] = c
	}
	return out
}

// MixByName returns MixA, MixB, MixC, MixL, MixR, MixRHonest or
// MixRGenerated by name (case-insensitive).
func MixByName(name string) (Mix, error) {
	switch strings.ToUpper(strings.TrimSpace(name)) {
	case "A":
		return MixA, nil
	case "B":
		return MixB, nil
	case "C":
		return MixC, nil
	case "L":
		return MixL, nil
	case "R":
		return MixR, nil
	case "R-HONEST":
		return MixRHonest, nil
	case "R-GENERATED":
		return MixRGenerated, nil
	}
	return Mix{}, fmt.Errorf("sim: unknown mix %q: use A, B, C, L, R, R-honest or R-generated", name)
}
