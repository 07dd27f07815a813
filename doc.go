// Package recrawl keeps a web site's pages fresh incrementally: it refetches
// only what probably changed, knows what it already has, and turns every real
// change into evidence a person can check.
//
// A 50,000-page site where 2% of pages change each week needs about 1,000
// fetches a week to stay current, not 50,000. recrawl gets there by
//
//   - discovering URLs from a sitemap (package sitemap), an llms.txt file
//     (package llmstxt), a bounded same-host crawl, or the Geonode map API;
//   - giving every page one canonical identity (package normalize);
//   - keeping per-URL state in SQLite (package crawlstate): validators,
//     content hash, revisit interval, missing-run counts, tombstones;
//   - sending conditional requests so unchanged pages answer 304 (package
//     fetch);
//   - hashing content only after stripping volatile blocks such as clocks,
//     tokens and "related posts" (package fingerprint);
//   - adapting each page's revisit interval to how often it really changes
//     (package schedule);
//   - treating a page as deleted only after the origin confirms it with 404 or
//     410, never because it vanished from a sitemap once.
//
// Host applications embed an Engine and drive runs from their own scheduler.
// Time comes from an injected clock (package clock), so every schedule,
// pacing delay and backoff can be tested without sleeping.
package recrawl
