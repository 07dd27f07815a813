package recrawl

import (
	"errors"
	"fmt"
	"mime"
	"strings"

	"github.com/gabriel-vasile/mimetype"

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

// isDocument reports whether an answer with the given Content-Type is a
// page the engine turns into text: HTML or XHTML, and, unless the page
// was reached by a crawl (html set), Markdown or plain text. Without a
// Content-Type the first bytes of body decide (mimetype detection). The
// engine skips every other answer as SkipNotDocument.
func isDocument(contentType string, body []byte, html bool) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		mt, _, _ = strings.Cut(strings.ToLower(contentType), ";")
		mt = strings.TrimSpace(mt)
	}
	if mt == "" {
		head := body[:min(len(body), 3072)]
		d := mimetype.Detect(head)
		if d.Is("text/html") || d.Is("application/xhtml+xml") {
			return true
		}
		return !html && d.Is("text/plain")
	}
	switch mt {
	case "text/html", "application/xhtml+xml":
		return true
	case "text/markdown", "text/x-markdown", "text/plain":
		return !html
	}
	return false
}
