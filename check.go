package recrawl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/extract"
)

// CheckResult is what Check found at an entry point.
type CheckResult struct {
	URL      string
	FinalURL string // after redirects ("" when the format was set by hand and no request was needed to count)
	// Format is the detected format, or the one set by hand.
	Format discover.Format
	// Detected is true when Format came from the document, false when it
	// was set by hand.
	Detected bool
	// RobotsAllowed reports whether robots.txt allows the entry URL for
	// the engine's user agent; CrawlDelay is its Crawl-delay (0 if none).
	RobotsAllowed bool
	CrawlDelay    time.Duration
	// Pages is what the source would start from: the pages a sitemap lists
	// (following its index), the links of an llms.txt file, or the
	// crawlable links on a start page.
	Pages int
	// StoppedBy names the cap that cut the count short, if any.
	StoppedBy string
}

// Check is the "Test connection" of a documentation-site source: it reads
// robots.txt first (a robots.txt that cannot be read is an error, as in
// Run), fetches the entry point, detects its format from the document (or
// uses entry.Format when set by hand) and counts what it found. It writes
// nothing to state. A document that fits no format is a
// *discover.FormatError naming the EntryFormat setting.
func (e *Engine) Check(ctx context.Context, entry discover.Entry) (*CheckResult, error) {
	res := &CheckResult{URL: entry.URL, Format: entry.Format}
	rules, err := e.polite.Rules(ctx, entry.URL)
	if err != nil {
		return nil, fmt.Errorf("recrawl: check %s: %w", entry.URL, err)
	}
	res.RobotsAllowed = rules.Allowed(e.cfg.UserAgent, entry.URL)
	res.CrawlDelay = rules.CrawlDelay(e.cfg.UserAgent)
	if !res.RobotsAllowed {
		return res, nil
	}
	env := discover.Env{
		Client:       e.client,
		MaxDepth:     capOrUnlimited(e.limits.MaxDepth),
		MaxDocuments: capOrUnlimited(e.limits.MaxPages),
		Logger:       e.cfg.Logger,
	}
	if entry.Format == "" {
		d, err := discover.Detect(ctx, e.client, entry.URL)
		if err != nil {
			return nil, fmt.Errorf("recrawl: check %s: %w", entry.URL, err)
		}
		res.Format, res.Detected, res.FinalURL, res.Pages = d.Format, true, d.FinalURL, d.Links
		if d.Format != discover.FormatSitemap {
			return res, nil
		}
	}
	f, err := discover.ParseFormat(string(res.Format))
	if err != nil {
		return nil, fmt.Errorf("recrawl: check %s: %w", entry.URL, err)
	}
	res.Format = f
	count := func(src discover.Source) error {
		res.Pages = 0
		err := src.Discover(ctx, env, func(l discover.Link) error {
			if l.Skip == "" {
				res.Pages++
			}
			return nil
		})
		var le *discover.LimitError
		if errors.As(err, &le) {
			res.StoppedBy = le.Limit
			return nil
		}
		return err
	}
	switch f {
	case discover.FormatSitemap:
		err = count(discover.Sitemap{URL: entry.URL})
	case discover.FormatLLMsTxt:
		err = count(discover.LLMsTxt{URL: entry.URL})
	case discover.FormatPage:
		res.Pages, res.FinalURL, err = e.pageLinks(ctx, entry.URL)
	}
	if err != nil {
		return nil, fmt.Errorf("recrawl: check %s: %w", entry.URL, err)
	}
	return res, nil
}

// pageLinks counts the links of a start page that a crawl would follow:
// on its host and under its directory.
func (e *Engine) pageLinks(ctx context.Context, pageURL string) (int, string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, pageURL, nil)
	if err != nil {
		return 0, "", err
	}
	resp, err := e.client.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, "", &discover.FetchError{URL: pageURL, Status: resp.StatusCode}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, e.limits.MaxBytes))
	if err != nil {
		return 0, "", err
	}
	final := resp.Request.URL.String()
	doc, err := extract.FromHTMLWithOptions(body, final, extract.Options{ContentType: resp.Header.Get("Content-Type")})
	if err != nil && !errors.Is(err, extract.ErrScriptRendered) && !errors.Is(err, extract.ErrEmpty) && !errors.Is(err, extract.ErrTooManyElements) {
		return 0, final, err
	}
	seen := map[string]bool{}
	for _, l := range doc.Links {
		n, err := e.cfg.Normalize.URL(l)
		if err != nil || seen[n] || !discover.InCrawlScope(final, n) {
			continue
		}
		seen[n] = true
	}
	return len(seen), final, nil
}
