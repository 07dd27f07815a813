package discover

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/gabriel-vasile/mimetype"

	"github.com/recrawl/recrawl/llmstxt"
	"github.com/recrawl/recrawl/sitemap"
)

// Format is the kind of document at an entry point.
type Format string

// The three entry formats. Their values are the words the EntryFormat
// setting accepts.
const (
	FormatSitemap Format = "sitemap"  // a sitemap or sitemap index: Sitemap
	FormatLLMsTxt Format = "llms.txt" // an llms.txt file: LLMsTxt
	FormatPage    Format = "page"     // an HTML page that starts a crawl: Crawl
)

// String returns the format's name ("sitemap", "llms.txt" or "page").
func (f Format) String() string { return string(f) }

// ParseFormat reads an EntryFormat setting: "sitemap", "llms.txt" (or
// "llms", "llmstxt") or "page" (or "crawl"), in any case. An empty string
// is the empty Format: detect.
func ParseFormat(s string) (Format, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "":
		return "", nil
	case "sitemap":
		return FormatSitemap, nil
	case "llms.txt", "llms", "llmstxt":
		return FormatLLMsTxt, nil
	case "page", "crawl":
		return FormatPage, nil
	}
	return "", fmt.Errorf("discover: unknown EntryFormat %q: use sitemap, llms.txt or page, or leave it empty to detect", s)
}

// FormatError is an entry point whose document fits none of the three
// formats, or does not fit the one its URL names: a sitemap URL that
// redirects to an HTML landing page, an llms.txt served as HTML, a PDF,
// an image, JSON. Detection refuses to guess; the EntryFormat setting
// overrides it.
type FormatError struct {
	URL         string // the entry URL
	FinalURL    string // after redirects
	ContentType string // as served
	Detected    string // the MIME type detected from the body
	// Expected is the format the URL's name promises ("" when it names
	// none).
	Expected Format
	Reason   string // what was found
}

// Error describes the failure.
func (e *FormatError) Error() string {
	var b strings.Builder
	b.WriteString("discover: entry point ")
	b.WriteString(e.URL)
	if e.FinalURL != "" && e.FinalURL != e.URL {
		b.WriteString(" (redirected to ")
		b.WriteString(e.FinalURL)
		b.WriteString(")")
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	b.WriteString("; set EntryFormat to sitemap, llms.txt or page to override")
	return b.String()
}

// Detection is what Detect learned about an entry point.
type Detection struct {
	Format      Format
	URL         string // as requested
	FinalURL    string // after redirects
	ContentType string // as served
	MIME        string // detected from the body
	// Links is what a first look finds: for a sitemap its entries (for an
	// index, its child sitemaps), for an llms.txt file its pages, for a
	// page the distinct links a crawl from it would follow.
	Links int
}

// sniffLen is how much of a document detection reads before deciding.
const sniffLen = 64 << 10

const entryAccept = "application/xml;q=0.9, text/xml;q=0.9, text/markdown;q=0.9, text/plain;q=0.8, text/html;q=0.8, */*;q=0.5"

// Detect requests entryURL with client and tells from the document, not
// from the URL, which format it is. The decision, in order:
//
//  1. A status other than 200 (after redirects) is a *FetchError.
//  2. An XML url set, sitemap index, RSS or Atom feed (gzipped or not) is
//     FormatSitemap, whatever the URL is called.
//  3. Markdown with an H1 title and at least one link is FormatLLMsTxt.
//  4. Plain text whose lines are absolute http(s) URLs is FormatSitemap
//     (a text sitemap).
//  5. Markdown with an H1 title but no link yet is FormatLLMsTxt.
//  6. An HTML page is FormatPage, unless the URL names a sitemap (its last
//     segment ends in .xml or .xml.gz or contains "sitemap") or an
//     llms.txt file (its last segment is llms*.txt): then the server
//     answered with a page where a document was promised (typically a
//     redirect to a landing page), and the answer is a *FormatError.
//  7. Anything else (PDF, image, JSON, other XML, binary, empty) is a
//     *FormatError naming the detected MIME type.
//
// Detect reads at most 64 KiB to decide, and for the Links count reads the
// rest of a sitemap or llms.txt file (up to DefaultMaxBytes). It sends one
// request (plus redirects).
func Detect(ctx context.Context, client *http.Client, entryURL string) (Detection, error) {
	if client == nil {
		return Detection{}, ErrNoClient
	}
	env := Env{Client: client}
	doc, err := sniff(ctx, env, entryURL, Validators{})
	if err != nil {
		return Detection{}, err
	}
	defer doc.close()
	d := doc.detection()
	switch doc.format {
	case FormatSitemap:
		p := sitemap.Parser{MaxBytes: env.maxBytes()}
		_, err = p.Parse(doc.body(), func(sitemap.Entry) error { d.Links++; return nil })
		if err != nil {
			return d, fmt.Errorf("discover: sitemap %s: %w", entryURL, err)
		}
	case FormatLLMsTxt:
		body, err := readLimited(doc.body(), env.maxBytes())
		if err != nil {
			return d, &FetchError{URL: entryURL, Err: err}
		}
		f, err := llmstxt.Parse(body)
		if err != nil {
			return d, fmt.Errorf("discover: llms.txt %s: %w", entryURL, err)
		}
		d.Links = len(f.Pages())
	case FormatPage:
		body, err := readLimited(doc.body(), env.maxBytes())
		if err != nil {
			return d, &FetchError{URL: entryURL, Err: err}
		}
		d.Links = countPageLinks(body, doc.final)
	}
	return d, nil
}

// entryDoc is an entry document being detected: the response with its
// first bytes already read.
type entryDoc struct {
	url    string
	final  string
	resp   *http.Response
	head   []byte
	format Format
	mime   string
}

// body returns the whole body: the bytes read for detection, then the rest.
func (d *entryDoc) body() io.Reader {
	return io.MultiReader(bytes.NewReader(d.head), d.resp.Body)
}

func (d *entryDoc) close() { d.resp.Body.Close() }

func (d *entryDoc) detection() Detection {
	return Detection{Format: d.format, URL: d.url, FinalURL: d.final, ContentType: d.resp.Header.Get("Content-Type"), MIME: d.mime}
}

// readCloser reads from one reader and closes another.
type readCloser struct {
	io.Reader
	io.Closer
}

// errStop ends a probing parse after its first entry.
var errStop = errors.New("stop")

// sniff requests an entry document (conditionally when v is not empty) and
// detects its format. A 304 is returned as a document without a format.
// The caller closes the document.
func sniff(ctx context.Context, env Env, entryURL string, v Validators) (*entryDoc, error) {
	resp, err := getDocument(ctx, env, entryURL, entryAccept, v)
	if err != nil {
		return nil, err
	}
	doc := &entryDoc{url: entryURL, final: finalURL(resp, entryURL), resp: resp}
	if resp.StatusCode == http.StatusNotModified {
		return doc, nil
	}
	head, err := io.ReadAll(io.LimitReader(resp.Body, sniffLen))
	if err != nil {
		resp.Body.Close()
		return nil, &FetchError{URL: entryURL, Err: err}
	}
	doc.head = head
	doc.format, doc.mime, err = classify(head, entryURL, doc.final, resp.Header.Get("Content-Type"))
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	return doc, nil
}

// urlPromise returns the format an entry URL's last path segment names:
// a sitemap (ends in .xml or .xml.gz, or contains "sitemap"), an llms.txt
// file (llms*.txt), or none.
func urlPromise(rawURL string) Format {
	u, err := url.Parse(rawURL)
	if err != nil {
		return ""
	}
	seg := strings.ToLower(u.Path[strings.LastIndexByte(u.Path, '/')+1:])
	switch {
	case strings.HasPrefix(seg, "llms") && strings.HasSuffix(seg, ".txt"):
		return FormatLLMsTxt
	case strings.HasSuffix(seg, ".xml"), strings.HasSuffix(seg, ".xml.gz"), strings.Contains(seg, "sitemap"):
		return FormatSitemap
	}
	return ""
}

// classify applies Detect's decision table to the first bytes of a body.
func classify(head []byte, entryURL, final, contentType string) (Format, string, error) {
	mt := mimetype.Detect(head)
	detected := mt.String()

	// A sitemap, by the sitemap parser: it reads the root element (through
	// gzip, BOMs and encodings) or the first URL line.
	entries := 0
	kind, smErr := sitemap.Parser{MaxBytes: sniffLen * 64}.Parse(bytes.NewReader(head), func(sitemap.Entry) error {
		entries++
		return errStop
	})
	switch kind {
	case sitemap.URLSet, sitemap.Index, sitemap.RSS, sitemap.Atom:
		return FormatSitemap, detected, nil
	}

	// An llms.txt file, by the llms.txt parser (a prefix parses as well as
	// the whole: only the title and the first links matter here).
	f, llmsErr := llmstxt.Parse(head)
	if llmsErr == nil && len(f.Pages()) > 0 {
		return FormatLLMsTxt, detected, nil
	}
	if kind == sitemap.Text && entries > 0 {
		return FormatSitemap, detected, nil
	}
	if llmsErr == nil {
		return FormatLLMsTxt, detected, nil
	}

	var notSitemap *sitemap.FormatError
	isHTML := mt.Is("text/html") || mt.Is("application/xhtml+xml") ||
		(errors.As(smErr, &notSitemap) && notSitemap.Format == "HTML")
	promise := urlPromise(entryURL)
	fe := &FormatError{URL: entryURL, FinalURL: final, ContentType: contentType, Detected: detected, Expected: promise}
	switch {
	case isHTML && promise == FormatSitemap:
		fe.Reason = "the URL names a sitemap, but the document is an HTML page (" + detected + ")"
	case isHTML && promise == FormatLLMsTxt:
		fe.Reason = "the URL names an llms.txt file, but the document is an HTML page (" + detected + ")"
	case isHTML:
		return FormatPage, detected, nil
	case len(bytes.TrimSpace(head)) == 0:
		fe.Reason = "the document is empty"
	default:
		fe.Reason = "the document is " + describe(mt, smErr, llmsErr) + ", which is neither a sitemap, an llms.txt file nor an HTML page"
	}
	return "", detected, fe
}

// describe names what a document is, for a FormatError.
func describe(mt *mimetype.MIME, smErr, llmsErr error) string {
	var notSitemap *sitemap.FormatError
	switch {
	case errors.As(smErr, &notSitemap) && notSitemap.Root != "":
		return "XML with the root element <" + notSitemap.Root + "> (" + mt.String() + ")"
	case mt.Is("text/plain") && errors.Is(llmsErr, llmstxt.ErrNoTitle):
		return "plain text without a Markdown H1 title or URL lines (" + mt.String() + ")"
	}
	return mt.String()
}
