// Package recrawl keeps a web site's pages fresh incrementally: it refetches
// only what probably changed, knows what it already has, and turns every real
// change into evidence a person can check.
//
// A 50,000-page site where 2% of pages change each week needs about 1,000
// fetches a week to stay current, not 50,000. recrawl gets there by
//
//   - discovering URLs from a sitemap, an llms.txt file, a bounded same-host
//     crawl or the Geonode map API (package discover), and reading the entry
//     document to tell which it is;
//   - giving every page one canonical identity (package normalize);
//   - keeping per-URL state in SQLite (package crawlstate): validators,
//     content hash, change statistics, missing-run counts, tombstones;
//   - sending conditional requests so unchanged pages answer 304, politely:
//     robots.txt, per-host pacing and the WEB_* caps (package fetch, Limits);
//   - hashing the readable Markdown of a page (package extract) only after
//     stripping volatile blocks such as clocks, tokens and "related posts"
//     (package fingerprint);
//   - estimating each page's change rate and spending fetches where they buy
//     the most freshness (package schedule);
//   - treating a page as deleted only after the origin confirms it with 404 or
//     410, never because it vanished from a sitemap once.
//
// When configured, every new or changed page is chunked (package chunk),
// embedded (package embed) and indexed with its provenance (package index),
// and each committed change becomes an alert with a stable ID, delivered
// exactly once to a sink (package alert) and explained by Engine.Explain.
//
// Host applications build one Engine with New and call Run for each source
// from their own scheduler; Engine.NextDue says when a source falls due and
// Engine.Shutdown stops gracefully. Time comes from an injected clock
// (package clock), so every schedule, pacing delay and backoff can be tested
// without sleeping.
package recrawl
