package recrawl

import (
	"errors"
	"fmt"
	"mime"
	"strings"

	"github.com/recrawl/recrawl/extract"
	"github.com/recrawl/recrawl/fetch"
)

// ErrUnsupportedType is the extract-stage failure of a response whose
// content type the engine cannot turn into text (images, PDFs, archives).
var ErrUnsupportedType = errors.New("unsupported content type")

// content is the readable part of a fetched page: what is fingerprinted,
// chunked and indexed.
type content struct {
	Markdown  string
	Title     string
	Canonical string
	Links     []string
}

// pageContent extracts a response's readable content: HTML through
// extract (main content as Markdown; script-rendered and empty pages are
// named failures), Markdown and plain text as they are.
func pageContent(resp *fetch.Response, maxBytes int) (content, error) {
	mt, _, _ := mime.ParseMediaType(resp.ContentType)
	pageURL := resp.FinalURL
	if pageURL == "" {
		pageURL = resp.URL
	}
	switch mt {
	case "text/markdown", "text/x-markdown", "text/plain":
		if strings.TrimSpace(string(resp.Body)) == "" {
			return content{}, extract.ErrEmpty
		}
		return content{Markdown: string(resp.Body)}, nil
	case "", "text/html", "application/xhtml+xml":
		doc, err := extract.FromHTMLWithOptions(resp.Body, pageURL, extract.Options{ContentType: resp.ContentType, MaxBytes: maxBytes})
		c := content{Markdown: doc.Markdown, Title: doc.Title, Canonical: doc.Canonical, Links: doc.Links}
		return c, err
	default:
		return content{}, fmt.Errorf("%w %q", ErrUnsupportedType, resp.ContentType)
	}
}
