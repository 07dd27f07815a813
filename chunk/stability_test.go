package chunk_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/chunk"
)

// This file measures how well chunk IDs survive small edits, for Split and
// for the naive alternative: fixed windows of the same size.

func newRand(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

var vocabulary = strings.Fields(`crawl page sitemap fetch index vector chunk heading
paragraph source change alert editor market publisher content hash state queue
retry batch stage worker lease canonical fragment parameter metadata record
evidence provenance operator schedule interval revisit robots delay policy
extraction readable markdown table list code block section document version`)

func sentence(r *rand.Rand) string {
	n := 6 + r.IntN(12)
	words := make([]string, n)
	for i := range words {
		words[i] = vocabulary[r.IntN(len(vocabulary))]
	}
	// A random number keeps generated paragraphs distinct.
	words[r.IntN(n)] = fmt.Sprint(r.IntN(100000))
	s := strings.Join(words, " ") + "."
	return strings.ToUpper(s[:1]) + s[1:]
}

func paragraph(r *rand.Rand) string {
	n := 2 + r.IntN(5)
	ss := make([]string, n)
	for i := range ss {
		ss[i] = sentence(r)
	}
	return strings.Join(ss, " ")
}

func block(r *rand.Rand) string {
	switch r.IntN(10) {
	case 0:
		lines := make([]string, 2+r.IntN(6))
		for i := range lines {
			lines[i] = fmt.Sprintf("run(%q, %d)", vocabulary[r.IntN(len(vocabulary))], r.IntN(1000))
		}
		return "```go\n" + strings.Join(lines, "\n") + "\n```"
	case 1:
		items := make([]string, 2+r.IntN(4))
		for i := range items {
			items[i] = "- " + sentence(r)
		}
		return strings.Join(items, "\n")
	default:
		return paragraph(r)
	}
}

// section is one split-level part of a generated page: a heading and blocks.
type section struct {
	heading string
	path    string
	blocks  []string
}

type page []section

func newPage(r *rand.Rand, n int) page {
	var p page
	for i := range n {
		title := fmt.Sprintf("Section %d %s", i+1, vocabulary[r.IntN(len(vocabulary))])
		p = append(p, section{heading: "## " + title, path: "Page > " + title, blocks: blocks(r)})
		if r.IntN(3) == 0 {
			sub := fmt.Sprintf("Detail %d", i+1)
			p = append(p, section{heading: "### " + sub, path: "Page > " + title + " > " + sub, blocks: blocks(r)})
		}
	}
	return p
}

func blocks(r *rand.Rand) []string {
	bs := make([]string, 1+r.IntN(6))
	for i := range bs {
		bs[i] = block(r)
	}
	return bs
}

func (p page) String() string {
	var b strings.Builder
	b.WriteString("# Page\n\nA generated page for the stability measurement.\n")
	for _, s := range p {
		b.WriteString("\n" + s.heading + "\n")
		for _, bl := range s.blocks {
			b.WriteString("\n" + bl + "\n")
		}
	}
	return b.String()
}

func (p page) clone() page {
	q := make(page, len(p))
	for i, s := range p {
		s.blocks = append([]string(nil), s.blocks...)
		q[i] = s
	}
	return q
}

// insert adds a new paragraph at a random place; edit rewrites one word of a
// random prose paragraph (changing its length). Both return the edited section's
// heading path.
func (p page) insert(r *rand.Rand) (page, string) {
	q := p.clone()
	s := &q[r.IntN(len(q))]
	at := r.IntN(len(s.blocks) + 1)
	s.blocks = append(s.blocks[:at], append([]string{paragraph(r)}, s.blocks[at:]...)...)
	return q, s.path
}

func (p page) edit(r *rand.Rand) (page, string) {
	q := p.clone()
	// Edit prose only: a word replaced inside a code fence or a list marker
	// would change the page's structure, not just one paragraph.
	var s *section
	var i int
	for {
		s = &q[r.IntN(len(q))]
		i = r.IntN(len(s.blocks))
		if !strings.HasPrefix(s.blocks[i], "```") && !strings.HasPrefix(s.blocks[i], "- ") {
			break
		}
	}
	words := strings.Split(s.blocks[i], " ")
	words[r.IntN(len(words))] = "replaced-" + vocabulary[r.IntN(len(vocabulary))]
	s.blocks[i] = strings.Join(words, " ")
	return q, s.path
}

func generatePage(r *rand.Rand, sections int) string { return newPage(r, sections).String() }

// fixedWindows is the naive splitter: windows of size characters.
func fixedWindows(src string, size int) []string {
	rs := []rune(src)
	var out []string
	for i := 0; i < len(rs); i += size {
		out = append(out, string(rs[i:min(i+size, len(rs))]))
	}
	return out
}

func hashSet(texts []string) map[string]bool {
	m := make(map[string]bool, len(texts))
	for _, t := range texts {
		sum := sha256.Sum256([]byte(t))
		m[hex.EncodeToString(sum[:])] = true
	}
	return m
}

// survival is the fraction of old chunk IDs still present after the edit.
func survival(old, new map[string]bool) float64 {
	kept := 0
	for id := range old {
		if new[id] {
			kept++
		}
	}
	return float64(kept) / float64(len(old))
}

func TestStabilityUnderEdits(t *testing.T) {
	trials := 200
	if testing.Short() || raceEnabled {
		trials = 40
	}
	opts := chunk.Options{}
	size := opts.Effective().MaxBytes
	for _, kind := range []string{"insert paragraph", "edit word"} {
		t.Run(kind, func(t *testing.T) {
			r := newRand(42)
			var heading, fixed float64
			var chunksPerPage, changedPerEdit float64
			for range trials {
				p := newPage(r, 30)
				var q page
				var editedPath string
				if kind == "insert paragraph" {
					q, editedPath = p.insert(r)
				} else {
					q, editedPath = p.edit(r)
				}
				before, after := chunk.Split(p.String(), opts), chunk.Split(q.String(), opts)
				checkInvariants(t, q.String(), opts, after)

				// Locality: every chunk outside the edited section survives.
				afterIDs := map[string]bool{}
				for _, c := range after {
					afterIDs[c.TextHash] = true
				}
				changed := 0
				for _, c := range before {
					if !afterIDs[c.TextHash] {
						changed++
						require.Equal(t, editedPath, c.HeadingPath(), "a chunk outside the edited section changed")
					}
				}
				changedPerEdit += float64(changed)
				chunksPerPage += float64(len(before))

				heading += survival(hashSet(texts(before)), hashSet(texts(after)))
				fixed += survival(hashSet(fixedWindows(p.String(), size)), hashSet(fixedWindows(q.String(), size)))
			}
			heading /= float64(trials)
			fixed /= float64(trials)
			t.Logf("%s, %d pages of 30 sections, %s: chunk IDs surviving: heading-aware %.3f, fixed %d-char windows %.3f (%.1f chunks per page, %.2f changed per edit)",
				kind, trials, chunk.Version(opts), heading, size, fixed, chunksPerPage/float64(trials), changedPerEdit/float64(trials))
			require.Greater(t, heading, 0.9)
			require.Greater(t, heading, fixed+0.2)
		})
	}
}
