package alert_test

import (
	"flag"
	"time"

	"github.com/recrawl/recrawl/alert"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

var t0 = time.Date(2026, 3, 2, 9, 30, 0, 0, time.UTC)

const (
	hashA = "9f2c1e0b7a6d5c4b3a29181706f5e4d3c2b1a09f8e7d6c5b4a3928170605f4e3"
	hashB = "1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a"
)

// sampleAlerts returns one alert of each kind, with English and Chinese
// text, chunk evidence and a diff.
func sampleAlerts() []alert.Alert {
	const pageURL = "https://docs.example.com/zh/pipeline"
	oldChunk := "## 增量抓取\n\nThe crawler refetches every page nightly.\n"
	newChunk := "## 增量抓取\n\nThe crawler refetches only pages that changed.\n只重新抓取已变更的页面。\n"
	return []alert.Alert{
		{
			ID:          alert.ID(pageURL+"/new", "", hashA),
			Kind:        alert.New,
			Source:      "docs-sitemap",
			URL:         pageURL + "/new",
			OriginalURL: "https://Docs.Example.com/zh/pipeline/new?utm_source=feed",
			NewHash:     hashA,
			DetectedAt:  t0,
			Title:       "新页面 <draft> & notes",
			Added: []alert.ChunkChange{
				{Ordinal: 0, HeadingPath: "新页面", Start: 0, End: 42, NewText: "# 新页面\n\nFirst version of the page.\n", NewRecordID: "rec-new-0"},
			},
			RecordIDs: []string{"rec-new-0"},
		},
		{
			ID:         alert.ID(pageURL, hashA, hashB),
			Kind:       alert.Changed,
			Source:     "docs-sitemap",
			URL:        pageURL,
			OldHash:    hashA,
			NewHash:    hashB,
			DetectedAt: t0.Add(26 * time.Hour),
			Title:      "抓取与嵌入流程",
			Changed: []alert.ChunkChange{
				{Ordinal: 3, HeadingPath: "流程 > 增量抓取", Start: 812, End: 812 + len(newChunk), OldText: oldChunk, NewText: newChunk, OldRecordID: "rec-a-3", NewRecordID: "rec-b-3"},
			},
			Removed: []alert.ChunkChange{
				{Ordinal: 5, HeadingPath: "流程 > 旧说明", Start: 1400, End: 1460, OldText: "Deprecated note.\n", OldRecordID: "rec-a-5"},
			},
			Diff:      alert.Diff(oldChunk, newChunk, 3),
			RecordIDs: []string{"rec-b-0", "rec-b-1", "rec-b-2", "rec-b-3", "rec-b-4"},
		},
		{
			ID:         alert.ID(pageURL+"/old", hashB, ""),
			Kind:       alert.Removed,
			Source:     "docs-sitemap",
			URL:        pageURL + "/old",
			OldHash:    hashB,
			DetectedAt: t0.Add(50 * time.Hour),
		},
	}
}
