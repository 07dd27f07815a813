package discover

import (
	"context"
	"fmt"
	"github.com/recrawl/recrawl/crawlstate"
	"net/http"
	"net/url"
	"strings"

	"github.com/recrawl/recrawl/llmstxt"
)

const llmsAccept = "text/markdown, text/plain;q=0.9, */*;q=0.5"

// LLMsTxt discovers the pages an llms.txt file (https://llmstxt.org) links
// to: every page of (*llmstxt.File).Pages, in document order, the Optional
// section included.
//
// Links are resolved against the file's final URL (after redirects) and
// yielded as absolute URLs, not normalized, with depth 0 and Via set to
// the LLMsTxt's URL. They are not skipped as off-host: an llms.txt file
// legitimately lists pages on other hosts (raw files, other sites of the
// project). A link that does not resolve to an absolute http(s) URL is
// yielded with Skip set to SkipInvalid.
//
// With Env.Documents and Env.OnUnchanged set, the file is requested
// conditionally with its stored validators; a 304 calls OnUnchanged with
// the URL and yields nothing. After a 200 the file's validators and number
// of pages are stored.
//
// A status other than 200 (or 304 to a conditional request) is a
// *FetchError; a body that is not an llms.txt file (no H1 title, an HTML
// page, binary, too large, too complex) is an error wrapping the parser's
// *llmstxt.FormatError.
type LLMsTxt struct {
	// URL is the llms.txt file, such as "https://docs.example.com/llms.txt".
	URL string
	// SourceName names the source in state; empty means URL.
	SourceName string
	// Only, when set, is a path prefix (such as "/docs/guide/"): only
	// URLs whose path starts with it are listed; the others are yielded with Skip set to SkipOutOfScope. It is a plain prefix:
	// "/docs/api" also holds "/docs/apiary"; end it with "/" for a
	// directory.
	Only string
}

// Name implements Source.
func (l LLMsTxt) Name() string {
	if l.SourceName != "" {
		return l.SourceName
	}
	return l.URL
}

// EntryURL implements Entrier.
func (l LLMsTxt) EntryURL() string { return l.URL }

// Discover implements Source.
func (l LLMsTxt) Discover(ctx context.Context, env Env, yield func(Link) error) error {
	if env.Client == nil {
		return ErrNoClient
	}
	info, known, err := env.stored(ctx, l.URL)
	if err != nil {
		return err
	}
	resp, err := getDocument(ctx, env, l.URL, llmsAccept, env.validators(info, known))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusNotModified {
		return env.OnUnchanged(ctx, l.URL)
	}
	body, err := readLimited(resp.Body, env.maxBytes())
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return &FetchError{URL: l.URL, Err: err}
	}
	return l.emit(ctx, env, resp, body, yield)
}

// emit parses a fetched llms.txt body, yields its pages and stores the
// file's state.
func (l LLMsTxt) emit(ctx context.Context, env Env, resp *http.Response, body []byte, yield func(Link) error) error {
	f, err := llmstxt.Parser{MaxBytes: int(min(env.maxBytes(), int64(maxInt)))}.Parse(body)
	if err != nil {
		return fmt.Errorf("discover: llms.txt %s: %w", l.URL, err)
	}
	base, err := url.Parse(finalURL(resp, l.URL))
	if err != nil {
		return &FetchError{URL: l.URL, Err: err}
	}
	pages := f.Pages()
	for _, p := range pages {
		if err := ctx.Err(); err != nil {
			return err
		}
		link := Link{URL: p.URL, Via: l.URL}
		ref, err := url.Parse(strings.TrimSpace(p.URL))
		if err == nil {
			abs := base.ResolveReference(ref)
			link.URL = abs.String()
			if (abs.Scheme != "http" && abs.Scheme != "https") || abs.Host == "" {
				link.Skip = SkipInvalid
			} else if !inOnly(l.Only, link.URL) {
				link.Skip = SkipOutOfScope
			}
		} else {
			link.Skip = SkipInvalid
		}
		if err := yield(link); err != nil {
			return err
		}
	}
	if env.Documents == nil {
		return nil
	}
	err = env.Documents.PutDocument(ctx, env.Source, crawlstate.Document{
		URL:          l.URL,
		ETag:         resp.Header.Get("ETag"),
		LastModified: resp.Header.Get("Last-Modified"),
		Entries:      len(pages),
	})
	if err != nil {
		return fmt.Errorf("discover: storing the state of %s: %w", l.URL, err)
	}
	return nil
}

const maxInt = int(^uint(0) >> 1)
