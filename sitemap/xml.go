package sitemap

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/ianaindex"
)

// maxDepth bounds element nesting. Sitemaps nest five levels at most
// (urlset/url/news:news/news:publication/news:name); the bound keeps a
// document of nothing but open tags from growing the decoder's stack.
const maxDepth = 100

// errTooDeep is the cause of a *SyntaxError for over-deep nesting.
var errTooDeep = fmt.Errorf("elements nested more than %d levels deep", maxDepth)

// maxTextRun bounds the bytes between two '<'. encoding/xml buffers a whole
// text node, comment or tag before returning it; no sitemap element comes
// near this size, so a longer run (a blank-filled gzip bomb, say) is
// rejected before it is buffered.
const maxTextRun = 1 << 20

var errNoMarkup = fmt.Errorf("more than %d bytes without markup; no sitemap element holds that much text", maxTextRun)

// markupGuard fails a read once more than maxTextRun bytes passed without a
// '<'.
type markupGuard struct {
	r   io.Reader
	run int
}

func (g *markupGuard) Read(p []byte) (int, error) {
	n, err := g.r.Read(p)
	chunk := p[:n]
	if first := bytes.IndexByte(chunk, '<'); first >= 0 {
		if g.run+first > maxTextRun {
			return n, errNoMarkup
		}
		g.run = n - 1 - bytes.LastIndexByte(chunk, '<')
	} else {
		g.run += n
	}
	if g.run > maxTextRun {
		return n, errNoMarkup
	}
	return n, err
}

const dublinCoreNS = "http://purl.org/dc/elements/1.1/"

// field is the entry child element whose text is being captured.
type field uint8

const (
	fNone       field = iota
	fLoc              // <loc>, RSS <link>
	fLastMod          // <lastmod>, RSS <pubDate>, Atom <updated>/<modified>
	fLastModAlt       // RSS <dc:date>, Atom <published>/<issued>
	fChangeFreq       // <changefreq>
	fPriority         // <priority>
	fAltLoc           // RSS <guid>, Atom <id>: used when there is no link
)

// capture accumulates an element's text, trimmed on the left and capped.
type capture struct {
	buf   []byte
	limit int
	over  bool // non-blank text beyond limit was dropped
}

func (c *capture) reset() { c.buf, c.over = c.buf[:0], false }

func (c *capture) add(b []byte) {
	if len(c.buf) == 0 {
		for len(b) > 0 && isSpace(b[0]) {
			b = b[1:]
		}
	}
	room := c.limit - len(c.buf)
	if len(b) <= room {
		c.buf = append(c.buf, b...)
		return
	}
	c.buf = append(c.buf, b[:room]...)
	if len(trimSpace(b[room:])) > 0 {
		c.over = true
	}
}

// pending is the entry being read.
type pending struct {
	loc, alt        []byte
	locSet, altSet  bool
	locOver         bool
	altOver         bool
	guidNotPerma    bool
	lastMod, modAlt time.Time
	changeFreq      ChangeFreq
	priority        float64
	hasPriority     bool
}

func (e *pending) reset() {
	*e = pending{loc: e.loc[:0], alt: e.alt[:0]}
}

type xmlParser struct {
	Parser
	in    *input
	dec   *xml.Decoder
	kind  Kind
	yield func(Entry) error

	rootSpace  string
	depth      int  // depth of the current element; the root is 1
	channel    bool // inside an RSS <channel> at depth 2
	entryDepth int  // depth of the open entry element, 0 when none
	entrySpace string
	field      field
	text       capture
	cur        pending
	yielded    int
}

func (p Parser) parseXML(in *input, br *bufio.Reader, yield func(Entry) error) (Kind, error) {
	dec := xml.NewDecoder(&markupGuard{r: br})
	// Non-strict mode keeps unknown entities (a bare & in a URL, or a
	// DOCTYPE-declared entity) as literal text instead of failing.
	dec.Strict = false
	dec.CharsetReader = in.charsetReader
	x := &xmlParser{
		Parser: p,
		in:     in,
		dec:    dec,
		yield:  yield,
		text:   capture{limit: p.maxLoc()},
	}
	return x.run()
}

func (x *xmlParser) run() (Kind, error) {
	for {
		tok, err := x.dec.Token()
		if err != nil {
			return x.kind, x.fail(err)
		}
		switch t := tok.(type) {
		case xml.StartElement:
			x.depth++
			if x.depth > maxDepth {
				return x.kind, x.fail(errTooDeep)
			}
			if x.depth == 1 {
				if err := x.root(t.Name); err != nil {
					return Unknown, err
				}
				continue
			}
			x.start(t)
		case xml.EndElement:
			if err := x.end(); err != nil {
				return x.kind, err
			}
			x.depth--
			if x.depth == 0 {
				// The document is complete; trailing bytes are not read.
				return x.kind, nil
			}
		case xml.CharData:
			if x.field != fNone && x.depth == x.entryDepth+1 {
				x.text.add(t)
			}
		}
	}
}

// line is the current 1-based line of the document.
func (x *xmlParser) line() int {
	line, _ := x.dec.InputPos()
	return line + x.in.lines
}

func (x *xmlParser) fail(err error) error {
	line := x.line()
	offset := x.in.skip + x.dec.InputOffset()
	if x.kind == Unknown {
		// Nothing was read yet: this is not an XML sitemap at all.
		if err == io.EOF {
			return &FormatError{Format: "XML", Err: errors.New("no root element")}
		}
		cerr := x.in.classify(err, line, offset)
		var se *SyntaxError
		if errors.As(cerr, &se) {
			return &FormatError{Format: "XML", Err: se}
		}
		return cerr
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return x.in.classify(err, line, offset)
}

func (x *xmlParser) root(name xml.Name) error {
	local := name.Local
	switch {
	case local == "urlset":
		x.kind = URLSet
	case local == "sitemapindex":
		x.kind = Index
	case local == "rss" || local == "RDF":
		x.kind = RSS
	case local == "feed":
		x.kind = Atom
	case htmlRoots[strings.ToLower(local)]:
		return &FormatError{Format: "HTML", Root: local}
	default:
		return &FormatError{Format: "XML", Root: local}
	}
	x.rootSpace = name.Space
	return nil
}

// isEntry reports whether the element just opened is an entry of the
// document's kind.
func (x *xmlParser) isEntry(name xml.Name) bool {
	switch x.kind {
	case URLSet:
		return x.depth == 2 && name.Local == "url" && x.sameSpace(name.Space)
	case Index:
		return x.depth == 2 && name.Local == "sitemap" && x.sameSpace(name.Space)
	case RSS:
		// RSS 2.0 nests items in <channel>; RSS 1.0 puts them beside it.
		return name.Local == "item" && (x.depth == 2 || x.depth == 3 && x.channel)
	case Atom:
		return x.depth == 2 && name.Local == "entry" && x.sameSpace(name.Space)
	}
	return false
}

func (x *xmlParser) sameSpace(space string) bool {
	return space == "" || space == x.rootSpace
}

func (x *xmlParser) start(t xml.StartElement) {
	switch {
	case x.entryDepth == 0:
		if x.isEntry(t.Name) {
			x.entryDepth = x.depth
			x.entrySpace = t.Name.Space
			x.cur.reset()
		} else if x.kind == RSS && x.depth == 2 && t.Name.Local == "channel" {
			x.channel = true
		}
	case x.depth == x.entryDepth+1:
		x.field = x.fieldOf(t)
		x.text.reset()
	}
}

func (x *xmlParser) fieldOf(t xml.StartElement) field {
	space, local := t.Name.Space, t.Name.Local
	if x.kind == RSS && space == dublinCoreNS && local == "date" {
		return fLastModAlt
	}
	if space != "" && space != x.entrySpace && space != x.rootSpace {
		return fNone // an extension: image:loc, xhtml:link, news:...
	}
	switch x.kind {
	case URLSet, Index:
		switch {
		case strings.EqualFold(local, "loc"):
			return fLoc
		case strings.EqualFold(local, "lastmod"):
			return fLastMod
		case x.kind == URLSet && strings.EqualFold(local, "changefreq"):
			return fChangeFreq
		case x.kind == URLSet && strings.EqualFold(local, "priority"):
			return fPriority
		}
	case RSS:
		switch local {
		case "link":
			return fLoc
		case "guid":
			x.cur.guidNotPerma = false
			for _, a := range t.Attr {
				if a.Name.Local == "isPermaLink" && strings.EqualFold(strings.TrimSpace(a.Value), "false") {
					x.cur.guidNotPerma = true
				}
			}
			return fAltLoc
		case "pubDate":
			return fLastMod
		}
	case Atom:
		switch local {
		case "link":
			x.atomLink(t.Attr)
			return fNone
		case "id":
			return fAltLoc
		case "updated", "modified":
			return fLastMod
		case "published", "issued":
			return fLastModAlt
		}
	}
	return fNone
}

// atomLink takes the first link whose rel is absent or "alternate".
func (x *xmlParser) atomLink(attrs []xml.Attr) {
	if x.cur.locSet {
		return
	}
	var href string
	rel := ""
	for _, a := range attrs {
		switch a.Name.Local {
		case "href":
			href = a.Value
		case "rel":
			rel = strings.TrimSpace(a.Value)
		}
	}
	if rel != "" && rel != "alternate" {
		return
	}
	x.text.reset()
	x.text.add([]byte(href))
	x.cur.loc = append(x.cur.loc[:0], trimSpace(x.text.buf)...)
	x.cur.locOver = x.text.over
	x.cur.locSet = len(x.cur.loc) > 0 || x.cur.locOver
}

func (x *xmlParser) end() error {
	switch {
	case x.entryDepth != 0 && x.depth == x.entryDepth+1:
		x.endField()
	case x.entryDepth != 0 && x.depth == x.entryDepth:
		x.entryDepth = 0
		return x.emit()
	case x.depth == 2:
		x.channel = false
	}
	return nil
}

func (x *xmlParser) endField() {
	f := x.field
	x.field = fNone
	text := trimSpace(x.text.buf)
	e := &x.cur
	switch f {
	case fLoc:
		if !e.locSet {
			e.loc = append(e.loc[:0], text...)
			e.locOver = x.text.over
			e.locSet = len(text) > 0 || e.locOver
		}
	case fAltLoc:
		if !e.altSet {
			e.alt = append(e.alt[:0], text...)
			e.altOver = x.text.over
			e.altSet = len(text) > 0 || e.altOver
		}
	case fLastMod:
		if !x.text.over {
			if t := parseTime(text); !t.IsZero() {
				e.lastMod = t
			}
		}
	case fLastModAlt:
		if !x.text.over && e.modAlt.IsZero() {
			e.modAlt = parseTime(text)
		}
	case fChangeFreq:
		if !x.text.over {
			e.changeFreq = parseChangeFreq(text)
		}
	case fPriority:
		if !x.text.over {
			e.priority, e.hasPriority = parsePriority(text)
		}
	}
}

// emit yields the finished entry, or reports why it is skipped.
func (x *xmlParser) emit() error {
	e := &x.cur
	loc, over := e.loc, e.locOver
	if !e.locSet && e.altSet && !e.guidNotPerma && (e.altOver || isHTTPURL(e.alt)) {
		// A feed item without a link: fall back to a permalink guid or an
		// http(s) Atom id.
		loc, over = e.alt, e.altOver
	}
	line := x.line()
	switch {
	case over:
		x.skip(line, loc, ErrLocTooLong)
		return nil
	case len(loc) == 0:
		x.skip(line, loc, ErrEmptyLoc)
		return nil
	}
	entry := Entry{
		Kind:        x.kind,
		Loc:         string(loc),
		LastMod:     e.lastMod,
		ChangeFreq:  e.changeFreq,
		Priority:    e.priority,
		HasPriority: e.hasPriority,
	}
	if entry.LastMod.IsZero() {
		entry.LastMod = e.modAlt
	}
	if err := x.yield(entry); err != nil {
		return fmt.Errorf("sitemap: stopped by yield after %d entries: %w", x.yielded, err)
	}
	x.yielded++
	return nil
}

// charsetReader decodes the encodings an XML declaration may name.
func (in *input) charsetReader(label string, r io.Reader) (io.Reader, error) {
	l := strings.ToLower(strings.TrimSpace(label))
	if in.utf16 || strings.HasPrefix(l, "utf-16") || l == "utf16" || l == "ucs-2" {
		// Either already transcoded from UTF-16 (selected by its BOM), or a
		// declaration claiming UTF-16 over bytes that were just read as
		// ASCII, which is a lie: read them as they are.
		return r, nil
	}
	enc, err := htmlindex.Get(l)
	if err != nil {
		enc, err = ianaindex.IANA.Encoding(l)
	}
	if err != nil || enc == nil {
		return nil, fmt.Errorf("unsupported encoding %q in the XML declaration", label)
	}
	return enc.NewDecoder().Reader(r), nil
}

func parseChangeFreq(b []byte) ChangeFreq {
	for _, f := range [...]ChangeFreq{Always, Hourly, Daily, Weekly, Monthly, Yearly, Never} {
		if strings.EqualFold(string(b), string(f)) {
			return f
		}
	}
	return ""
}

func parsePriority(b []byte) (float64, bool) {
	if len(b) == 0 || len(b) > 32 {
		return 0, false
	}
	v, err := strconv.ParseFloat(string(b), 64)
	if err != nil || !(v >= 0 && v <= 1) {
		return 0, false
	}
	return v, true
}
