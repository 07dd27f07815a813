package extract

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// DefaultMaxBytes is the largest HTML input FromHTML accepts when
// Options.MaxBytes is zero: 5 MiB.
const DefaultMaxBytes = 5 << 20

var (
	// ErrScriptRendered means the page's content is rendered by client-side
	// JavaScript: the HTML runs scripts and holds no text, or little text
	// beside an empty application root or a <noscript> request to enable
	// JavaScript. Fetch the page with a rendering back end, or leave it out
	// of the source.
	ErrScriptRendered = errors.New("extract: page content is rendered by client-side JavaScript; the HTML holds no readable text")

	// ErrEmpty means the page has no readable text once boilerplate is
	// removed (and shows no sign of being rendered by JavaScript).
	ErrEmpty = errors.New("extract: page has no readable text")

	// ErrMalformed means the HTML parser gave up on the page, for example
	// because elements are nested more than 512 deep.
	ErrMalformed = errors.New("extract: HTML cannot be parsed")

	// ErrPageURL means the page URL passed to FromHTML is not an absolute
	// http or https URL, so the page's links cannot be resolved.
	ErrPageURL = errors.New("extract: page URL must be an absolute http or https URL")
)

// TooLargeError reports HTML input above the size cap. Nothing is parsed.
type TooLargeError struct {
	// Size is the input length in bytes; Limit is the cap it exceeded.
	Size, Limit int
}

// Error says how large the input was and how to get past the cap.
func (e *TooLargeError) Error() string {
	return fmt.Sprintf("extract: HTML input is %d bytes, above the %d-byte cap; raise Options.MaxBytes or cap the fetch size", e.Size, e.Limit)
}

// Document is what FromHTML extracts from one page.
type Document struct {
	// Title is the page title: the <title> element, else the og:title
	// meta property, else the first <h1>; whitespace collapsed. <title>
	// comes first because nearly every page has one and it is the name
	// browsers and search results show (site suffix included).
	Title string
	// Markdown is the readable main content as CommonMark with pipe
	// tables and fenced code blocks; links in it are absolute. On a
	// documentation page, recognised by a Rule or by its shape, its first
	// line is the page title as "# Title" (the title heading's own level
	// when it is not an <h1>) and heading levels are those of the page; on
	// a page that does not declare itself an article, the title heading
	// leads too.
	Markdown string
	// Canonical is the absolute http(s) URL of <link rel="canonical">,
	// resolved like a link, without fragment; empty when the page declares
	// none or an unusable one.
	Canonical string
	// Links are the absolute http(s) targets of every <a href> in the whole
	// page (navigation included, as a crawler needs them), resolved against
	// <base href> or the page URL, fragment dropped, deduplicated in
	// document order.
	Links []string
	// Lang is the <html lang> attribute, as declared (may be empty).
	Lang string
	// Description is the meta description (else og:description).
	Description string
}

// Options adjust FromHTMLWithOptions. The zero value is valid.
type Options struct {
	// ContentType is the response's Content-Type header, if known. Its
	// charset parameter overrides any <meta> declaration in the page (a
	// byte order mark overrides both).
	ContentType string
	// MaxBytes caps the HTML input size; zero or less means
	// DefaultMaxBytes. Larger input fails with *TooLargeError before it is
	// parsed: the Markdown converter cannot be interrupted, so the size of
	// its input is what bounds its time.
	MaxBytes int
	// MaxElements caps the elements (start tags) of the page; zero or
	// less means DefaultMaxElements. A page with more fails with
	// ErrTooManyElements and only its metadata and links: the document
	// tree, which the content extraction needs, costs memory per element.
	MaxElements int
	// Rules are generator rules tried before BuiltinRules, in order (see
	// Rule). A selector that does not parse fails the call with ErrRule.
	Rules []Rule
}

// FromHTML extracts the readable content and metadata of an HTML page
// fetched from pageURL, which must be an absolute http(s) URL. It is
// FromHTMLWithOptions with zero Options: the charset comes from a byte
// order mark or the page's <meta> declaration.
//
// Errors: *TooLargeError for input above DefaultMaxBytes, ErrPageURL for a
// bad pageURL, ErrMalformed for HTML the parser gives up on,
// ErrTooManyElements for a page of more than DefaultMaxElements elements,
// ErrScriptRendered for a page rendered by JavaScript, ErrEmpty for a page
// without readable text. With the last three the returned Document still
// carries the page's title, canonical URL, links and other metadata (but no
// Markdown), so a crawler can follow the links of a rejected page; with the
// others it is empty. FromHTML is safe for concurrent use.
func FromHTML(body []byte, pageURL string) (Document, error) {
	return FromHTMLWithOptions(body, pageURL, Options{})
}

// FromHTMLWithType is FromHTML for a response whose Content-Type header is
// known; a charset parameter in it decides the page's encoding.
func FromHTMLWithType(body []byte, pageURL, contentType string) (Document, error) {
	return FromHTMLWithOptions(body, pageURL, Options{ContentType: contentType})
}

// FromHTMLWithOptions is FromHTML with explicit options.
func FromHTMLWithOptions(body []byte, pageURL string, opts Options) (Document, error) {
	return fromHTML(body, pageURL, opts, convert)
}

// fromHTML is FromHTMLWithOptions converting the chosen node with conv.
func fromHTML(body []byte, pageURL string, opts Options, conv convertFunc) (Document, error) {
	return fromHTMLOmitting(body, pageURL, opts, conv, nil)
}

// fromHTMLOmitting is fromHTML leaving out the built-in rules omit
// reports (by index in BuiltinRules; nil omits none).
func fromHTMLOmitting(body []byte, pageURL string, opts Options, conv convertFunc, omit func(int) bool) (Document, error) {
	limit := opts.MaxBytes
	if limit <= 0 {
		limit = DefaultMaxBytes
	}
	if len(body) > limit {
		return Document{}, &TooLargeError{Size: len(body), Limit: limit}
	}
	page, err := url.Parse(pageURL)
	if err != nil || !isHTTP(page) {
		return Document{}, fmt.Errorf("%w: got %q", ErrPageURL, pageURL)
	}
	page.RawQuery = escapeQuery(page.RawQuery)
	if err := checkRules(opts.Rules); err != nil {
		return Document{}, err
	}
	text := decode(body, opts.ContentType)
	maxElements := opts.MaxElements
	if maxElements <= 0 {
		maxElements = DefaultMaxElements
	}
	// Every element starts with "<": most pages are far below the limit
	// by their length or this count alone.
	if len(text) > maxElements && bytes.Count(text, []byte{'<'}) > maxElements {
		if scan, n := streamScan(text); n > maxElements {
			return scan.document(page), fmt.Errorf("%w: %d elements, above the limit of %d; raise Options.MaxElements", ErrTooManyElements, n, maxElements)
		}
	}
	doc, err := html.Parse(bytes.NewReader(text))
	if err != nil {
		// The parser refuses documents nested more than 512 elements deep.
		return Document{}, fmt.Errorf("%w: %w", ErrMalformed, err)
	}

	scan := scanPage(doc)
	scan.omit = omit
	base := scan.baseURL(page)
	out := scan.document(page)
	restoreTextTags(scan.accidents)
	var md string
	if sel, ok := chooseContainer(doc, opts.Rules, scan); ok && holdsWords(sel.container) {
		// A documentation page: its generator's container is the content,
		// however short, and static API pages are never script shells.
		md, err = containerMarkdown(doc, sel, base, scan.resolved, pageTitle(out.Title), conv)
	} else {
		if scriptRendered(doc) {
			return out, ErrScriptRendered
		}
		if documentLike(doc) {
			md, err = genericMarkdown(doc, scan, base, scan.resolved, conv)
		} else {
			var title string
			if body := find(doc, atom.Body); body != nil {
				if h, _ := titleHeading(body, scan); h != nil {
					title = collapseSpace(textContent(h))
				}
			}
			if articleLike(doc, scan) {
				title = ""
			}
			md, err = readableMarkdown(doc, base, scan.resolved, conv)
			md = leadWithTitle(md, title)
		}
	}
	if err != nil {
		return out, err
	}
	if !hasWords(md) {
		return out, ErrEmpty
	}
	out.Markdown = md
	return out, nil
}

func isHTTP(u *url.URL) bool {
	return (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
