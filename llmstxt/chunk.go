package llmstxt

import (
	"bytes"

	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// A document larger than chunkThreshold bytes is parsed in pieces of
// about chunkSize bytes, so its syntax tree (some 40 bytes per byte of a
// list of links) never exists whole.
const (
	chunkThreshold = 1 << 20
	chunkSize      = 256 << 10
)

// chunkBounds returns the offsets that cut src into pieces of at least
// size bytes (the last may be shorter), starting with 0 and ending with
// len(src), and the regions of src that may hold link reference
// definitions. A cut falls only at the start of a line that begins, at
// column 0, an ATX heading ("# ") or a bullet list item with content
// ("- x"), outside fenced code and HTML blocks: such a line closes every
// open block but those two, so each piece parses into the blocks the whole
// document has there (a list cut in two becomes two lists, with the same
// items). When in doubt it does not cut.
//
// A region is a run of lines that starts where a block must start (the
// start of src, after a blank line, after the end of fenced code or of an
// HTML block), ends before the next such place, and has "]:" in it.
// Parsed on its own it defines what it defines in the whole document: a
// definition at top level, in a blockquote (nested or not) or in a list
// item, its title on a later line included; none in a paragraph's
// continuation or in code. A region over maxRefRegion bytes is not
// returned: its definitions then resolve only within its own piece.
func chunkBounds(src []byte, size int) (bounds []int, regions [][]byte) {
	bounds = []int{0}
	var (
		fence    byte // '`' or '~' while in fenced code
		fenceLen int
		html     []byte // the end marker of an HTML block of kinds 1-5
		htmlOpen bool   // in an HTML block that ends at a blank line
		region   int    // where the current region starts
		defines  bool   // the current region has "]:"
	)
	flush := func(end, next int) {
		if defines && end-region <= maxRefRegion {
			regions = append(regions, src[region:end])
		}
		region, defines = next, false
	}
	for start := 0; start < len(src); {
		end := bytes.IndexByte(src[start:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += start
		}
		line := src[start:end]
		lineAt := start
		start = min(end+1, len(src))

		indent := 0
		for indent < len(line) && indent < 4 && line[indent] == ' ' {
			indent++
		}
		rest := line[indent:]
		blank := len(bytes.TrimSpace(line)) == 0
		switch {
		case fence != 0:
			if indent < 4 && closesFence(rest, fence, fenceLen) {
				fence, region = 0, start
			}
			continue
		case html != nil:
			if bytes.Contains(bytes.ToLower(line), html) {
				html, region = nil, start
			}
			continue
		case htmlOpen:
			if htmlOpen = !blank; !htmlOpen {
				region = start
			}
			continue
		}
		if blank {
			flush(lineAt, start)
			continue
		}
		if indent < 4 {
			if c, n := opensFence(rest); n > 0 {
				fence, fenceLen = c, n
				flush(lineAt, start)
				continue
			}
			if len(rest) > 0 && rest[0] == '<' {
				flush(lineAt, start)
				if m := htmlEnd(rest); m != nil {
					if !bytes.Contains(bytes.ToLower(rest[1:]), m) {
						html = m
					} else {
						region = start // a one-line HTML block
					}
				} else {
					htmlOpen = true
				}
				continue
			}
		}
		if bytes.Contains(line, []byte("]:")) {
			defines = true
		}
		if lineAt-bounds[len(bounds)-1] >= size && indent == 0 && startsTopBlock(line) {
			bounds = append(bounds, lineAt)
		}
	}
	flush(len(src), len(src))
	return append(bounds, len(src)), regions
}

// maxRefRegion bounds a region parsed for its reference definitions, so
// that its syntax tree stays small.
const maxRefRegion = chunkSize

// startsTopBlock reports whether a line at column 0 opens an ATX heading
// or a bullet list item with content.
func startsTopBlock(line []byte) bool {
	if len(line) < 3 {
		return false
	}
	switch line[0] {
	case '-', '*', '+':
		return (line[1] == ' ' || line[1] == '\t') && len(bytes.TrimSpace(line[2:])) > 0 && !isBreak(line)
	case '#':
		i := 0
		for i < len(line) && line[i] == '#' {
			i++
		}
		return i <= 6 && i < len(line) && (line[i] == ' ' || line[i] == '\t')
	}
	return false
}

// isBreak reports a thematic break made of the line's first character.
func isBreak(line []byte) bool {
	n := 0
	for _, c := range line {
		switch c {
		case line[0]:
			n++
		case ' ', '\t', '\r':
		default:
			return false
		}
	}
	return n >= 3
}

// opensFence returns the fence character and length of a line that opens
// fenced code, or 0.
func opensFence(rest []byte) (byte, int) {
	if len(rest) < 3 || (rest[0] != '`' && rest[0] != '~') {
		return 0, 0
	}
	c, n := rest[0], 0
	for n < len(rest) && rest[n] == c {
		n++
	}
	if n < 3 || (c == '`' && bytes.IndexByte(rest[n:], '`') >= 0) {
		return 0, 0
	}
	return c, n
}

func closesFence(rest []byte, c byte, n int) bool {
	k := 0
	for k < len(rest) && rest[k] == c {
		k++
	}
	return k >= n && len(bytes.TrimSpace(rest[k:])) == 0
}

// htmlEnd returns the end marker of an HTML block of CommonMark kinds 1-5
// opened by rest, lower case, or nil for the kinds that end at a blank
// line.
func htmlEnd(rest []byte) []byte {
	l := bytes.ToLower(rest)
	for _, tag := range []string{"script", "pre", "style", "textarea"} {
		if bytes.HasPrefix(l[1:], []byte(tag)) {
			return []byte("</" + tag + ">")
		}
	}
	switch {
	case bytes.HasPrefix(l, []byte("<!--")):
		return []byte("-->")
	case bytes.HasPrefix(l, []byte("<?")):
		return []byte("?>")
	case bytes.HasPrefix(l, []byte("<![cdata[")):
		return []byte("]]>")
	case len(l) > 2 && l[1] == '!' && l[2] >= 'a' && l[2] <= 'z':
		return []byte(">")
	}
	return nil
}

// references parses the regions of a chunked document that may hold
// definitions (see chunkBounds) and returns the link reference definitions
// in them by normalized label (the first definition of a label wins, as in
// the whole document).
func references(regions [][]byte) map[string]parser.Reference {
	refs := map[string]parser.Reference{}
	for _, l := range regions {
		pc := parser.NewContext()
		markdown.Parse(text.NewReader(l), parser.WithContext(pc))
		for _, r := range pc.References() {
			key := util.ToLinkReference(r.Label())
			if _, dup := refs[key]; !dup {
				refs[key] = r
			}
		}
	}
	return refs
}

// sharedRefs is the parser context of one piece of a chunked document: it
// resolves references against the definitions of the whole document.
type sharedRefs struct {
	parser.Context
	refs map[string]parser.Reference
}

// Reference implements parser.Context.
func (c sharedRefs) Reference(label string) (parser.Reference, bool) {
	if r, ok := c.refs[label]; ok {
		return r, true
	}
	return c.Context.Reference(label)
}
