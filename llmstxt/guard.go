package llmstxt

import (
	"bytes"
	"fmt"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
)

// MaxNesting is the deepest container nesting (blockquotes and list items,
// counted from markers and indentation) a line may have. goldmark's cost
// grows with the square of the depth or worse; real files nest a few levels.
const MaxNesting = 32

// binarySample is how much of the start of a document the binary check reads.
const binarySample = 8 << 10

// checkBinary rejects bodies that are not UTF-8 or ASCII text.
func checkBinary(src []byte) error {
	switch {
	case bytes.HasPrefix(src, []byte{0x1f, 0x8b}):
		return &FormatError{Err: ErrBinary, Detail: "the body is gzip-compressed; decompress it before parsing (the server probably sent it without Content-Encoding: gzip)"}
	case bytes.HasPrefix(src, []byte{0xfe, 0xff}), bytes.HasPrefix(src, []byte{0xff, 0xfe}):
		return &FormatError{Err: ErrBinary, Detail: "the body is UTF-16 (byte order mark found); re-encode it as UTF-8"}
	}
	sample := src[:min(len(src), binarySample)]
	if i := bytes.IndexByte(sample, 0); i >= 0 {
		return &FormatError{Err: ErrBinary, Detail: fmt.Sprintf("NUL byte at offset %d; an llms.txt file is UTF-8 Markdown text", i)}
	}
	controls := 0
	for _, c := range sample {
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v' && c != 0x1b) || c == 0x7f {
			controls++
		}
	}
	if len(sample) > 0 && controls*10 > len(sample) {
		return &FormatError{Err: ErrBinary, Detail: fmt.Sprintf("%d of the first %d bytes are control characters; an llms.txt file is UTF-8 Markdown text", controls, len(sample))}
	}
	return nil
}

// workBudget is how many units of estimated parser work a document of n
// bytes may cost before Parse refuses it. A unit is roughly one byte or one
// line goldmark has to look at again; ordinary Markdown costs well under
// one unit per byte.
func workBudget(n int) int { return 32*n + 1<<20 }

// guard estimates the work goldmark will do on one document and stops the
// parse when the estimate leaves the budget. It models the superlinear paths
// measured in goldmark v1.8.7:
//
//   - nesting: every line is matched against every open container;
//   - inline links: each "](" reads a destination, then a title that may
//     run over several lines, then ")"; when that fails, the same text is
//     read again from the next "](";
//   - label lookups: every "]" that is not a complete inline link copies
//     its label by walking the paragraph's lines back from the last one, and
//     each "]" rescans the "[" openers still pending;
//   - reference definitions: a run of them is spliced out of the paragraph
//     one at a time.
//
// The line pass (checkLines) covers nesting, and inline links within a
// line (as in headings), before goldmark runs; the paragraph pass
// (Transform, a goldmark ParagraphTransformer) sees each paragraph's exact
// lines before its inlines are parsed and covers the rest.
// The guard's own work is bounded by the budget, so it is linear.
type guard struct {
	budget int
	spent  int
	err    error
}

func newGuard(n int) *guard { return &guard{budget: workBudget(n)} }

func (g *guard) fail(line int, what string) {
	if g.err == nil {
		where := ""
		if line > 0 {
			where = fmt.Sprintf("line %d: ", line)
		}
		g.err = &FormatError{Err: ErrTooComplex, Detail: where + what + "; an llms.txt index needs none of this, so the input is probably not one (or was built to stall Markdown parsers)"}
	}
}

// checkLines is the line pass: container nesting, and the inline links of
// each line taken alone. It reads every line, code included: it
// cannot know for sure where goldmark's code blocks are, and ordinary code
// costs it little.
func (g *guard) checkLines(src []byte) error {
	lineNo := 0
	for start := 0; start < len(src); {
		end := bytes.IndexByte(src[start:], '\n')
		if end < 0 {
			end = len(src)
		} else {
			end += start
		}
		line := src[start:end]
		lineStart := start
		start = end + 1
		lineNo++

		indent, markers, rest := containerPrefix(line)
		if depth := markers + indent/2; markers > 0 && depth > MaxNesting {
			g.fail(lineNo, fmt.Sprintf("blockquotes and lists nested %d deep, more than MaxNesting (%d)", depth, MaxNesting))
			return g.err
		}
		restStart := lineStart + len(line) - len(rest)
		cost, _ := inlineCost(src, restStart, end, end, g.budget-g.spent, 0, nil)
		g.spent += cost
		if g.spent > g.budget {
			g.fail(lineNo, "too many unclosed links or brackets")
			return g.err
		}
	}
	return nil
}

// inlineCost estimates the inline parsing work of the line src[start:stop]
// of a block whose text ends at end: the reads after each "](" (see
// linkTail) and the rescans of pending "[" openers. openers is the number
// of openers left pending by earlier lines of the block; the count left by
// this line is returned. Each "]" that does not complete an inline link
// triggers a label lookup and is counted into *lookups when lookups is not
// nil. Counting stops past limit.
func inlineCost(src []byte, start, stop, end, limit, openers int, lookups *int) (cost, pending int) {
	for i := start; i < stop && cost <= limit; i++ {
		switch src[i] {
		case '\\':
			i++
		case '[':
			openers++
		case ']':
			cost += openers
			if openers > 0 {
				openers--
			}
			ok := false
			if i+1 < stop && src[i+1] == '(' {
				var n int
				n, ok = linkTail(src, i+2, end, limit-cost)
				cost += 4 * n
			}
			if !ok && lookups != nil {
				*lookups++
			}
		}
	}
	return cost, openers
}

// paragraphGuardKey holds the *guard of the document being parsed.
var paragraphGuardKey = parser.NewContextKey()

// paragraphGuard is the paragraph pass of the guard: a goldmark
// ParagraphTransformer that runs before link reference definitions are
// extracted and before inlines are parsed. Once the budget is spent it
// empties every paragraph, so goldmark has nothing left to be slow on and
// Parse reports the error.
type paragraphGuard struct{}

// Transform implements parser.ParagraphTransformer.
func (paragraphGuard) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	g, _ := pc.Get(paragraphGuardKey).(*guard)
	if g == nil {
		return
	}
	lines := node.Lines()
	if g.err == nil {
		src := reader.Source()
		n := lines.Len()
		end := 0
		if n > 0 {
			end = lines.At(n - 1).Stop
		}
		openers := 0
		for i := 0; i < n && g.spent <= g.budget; i++ {
			seg := lines.At(i)
			lookups := 0
			var cost int
			cost, openers = inlineCost(src, seg.Start, seg.Stop, end, g.budget-g.spent, openers, &lookups)
			// Each lookup walks back from the paragraph's last line to this one.
			g.spent += cost + lookups*(n-i)
		}
		if g.spent > g.budget {
			g.fail(0, fmt.Sprintf("a paragraph of %d lines holds too many unclosed brackets, unresolved link labels or reference definitions", n))
		}
	}
	if g.err != nil {
		node.SetLines(text.NewSegments())
	}
}

// containerPrefix skips the blockquote and list markers that open a line and
// reports the indentation columns seen, the number of markers and the rest
// of the line.
func containerPrefix(line []byte) (indent, markers int, rest []byte) {
	i := 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			if line[i] == '\t' {
				indent += 4
			} else {
				indent++
			}
			i++
		}
		if i >= len(line) {
			return indent, markers, line[i:]
		}
		switch c := line[i]; {
		case c == '>':
			markers++
			i = skipOneSpace(line, i+1)
		case (c == '-' || c == '*' || c == '+') && (i+1 == len(line) || line[i+1] == ' ' || line[i+1] == '\t'):
			markers++
			i = skipOneSpace(line, i+1)
		case c >= '0' && c <= '9':
			j := i
			for j < len(line) && j-i < 9 && line[j] >= '0' && line[j] <= '9' {
				j++
			}
			if j < len(line) && (line[j] == '.' || line[j] == ')') && (j+1 == len(line) || line[j+1] == ' ' || line[j+1] == '\t') {
				markers++
				i = skipOneSpace(line, j+1)
				continue
			}
			return indent, markers, line[i:]
		default:
			return indent, markers, line[i:]
		}
	}
}

// skipOneSpace skips the space that belongs to a container marker.
func skipOneSpace(line []byte, i int) int {
	if i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		return i + 1
	}
	return i
}

// linkTail follows goldmark's inline link parser from src[pos], just after
// a "](", through the destination, an optional title and the closing ")",
// within a block whose text ends at end. It returns how many bytes that
// reads and whether the link completes; when unsure it reports false, which
// overestimates the work. It never reads more than limit bytes.
func linkTail(src []byte, pos, end, limit int) (int, bool) {
	end = min(end, len(src), pos+max(limit, 0))
	j := pos
	skipSpaces := func() { // like goldmark, this crosses lines
		for j < end && (src[j] == ' ' || src[j] == '\t' || src[j] == '\n' || src[j] == '\r') {
			j++
		}
	}
	skipSpaces()
	if j < end && src[j] == ')' {
		return j + 1 - pos, true // empty destination
	}
	// The destination never crosses a line.
	if j < end && src[j] == '<' {
		k := j + 1
		for ; k < end && src[k] != '>' && src[k] != '\n'; k++ {
			if src[k] == '\\' {
				k++
			}
		}
		if k >= end || src[k] != '>' {
			return k - pos, false
		}
		j = k + 1
	} else {
		k, open := j, 0
	destination:
		for ; k < end; k++ {
			switch src[k] {
			case '\\':
				k++
			case '(':
				open++
			case ')':
				open--
				if open < 0 {
					break destination
				}
			case ' ', '\t', '\r', '\n':
				break destination
			}
		}
		if k == j {
			return k - pos, false
		}
		j = min(k, end)
	}
	skipSpaces()
	if j < end && (src[j] == '"' || src[j] == '\'' || src[j] == '(') {
		opener, closer := src[j], src[j]
		if opener == '(' {
			closer = ')'
		}
		k := j + 1
		for ; k < end && src[k] != closer; k++ {
			if src[k] == '\\' {
				k++
			} else if src[k] == opener {
				return k - pos, false
			}
		}
		if k >= end {
			return end - pos, false
		}
		j = k + 1
		skipSpaces()
	}
	return j - pos, j < end && src[j] == ')'
}
