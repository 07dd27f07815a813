package sqlitevec

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
)

// RRFConstant is the k of reciprocal rank fusion: a record at rank r
// (from 1) of a list adds 1/(RRFConstant + r) to its fused score. 60 is
// the value of Cormack, Clarke and Büttcher (2009), which most hybrid
// search systems keep.
const RRFConstant = 60

// ranked is one record in a fused result: its ranks in the vector and the
// keyword list (0: absent from that list) and its fused score.
type ranked struct {
	rowid              int64
	id                 string
	vectorRank, kwRank int
	fused              float64
}

// fuse combines the ranked lists of rowids (vector first, keyword
// second) by reciprocal rank fusion and returns the records by falling
// fused score, equal scores by ID; ids gives each rowid's record ID.
func fuse(vector, keyword []int64, ids map[int64]string) []ranked {
	byRow := map[int64]*ranked{}
	get := func(row int64) *ranked {
		r, ok := byRow[row]
		if !ok {
			r = &ranked{rowid: row, id: ids[row]}
			byRow[row] = r
		}
		return r
	}
	for i, row := range vector {
		r := get(row)
		r.vectorRank = i + 1
		r.fused += 1 / float64(RRFConstant+i+1)
	}
	for i, row := range keyword {
		r := get(row)
		r.kwRank = i + 1
		r.fused += 1 / float64(RRFConstant+i+1)
	}
	out := make([]ranked, 0, len(byRow))
	for _, r := range byRow {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(b.fused, a.fused), cmp.Compare(a.id, b.id))
	})
	return out
}

// maxQueryTerms bounds the terms of a keyword query: a pasted page does
// not become a query of thousands of terms.
const maxQueryTerms = 16

// maxTermBytes bounds one term; longer runs of letters are cut.
const maxTermBytes = 64

// queryTerms turns free text into FTS5 terms that any input leaves
// valid: the text's words (runs of letters, digits and marks, as FTS5's
// unicode61 tokenizer cuts them), lowercased, each a quoted string, so
// operators, quotes, column filters and prefix stars in the text are
// plain characters. Duplicate words count once; a text without words has
// none.
func queryTerms(text string) []string {
	var terms []string
	seen := map[string]bool{}
	var b strings.Builder
	flush := func() {
		if b.Len() == 0 {
			return
		}
		t := strings.ToLower(b.String())
		b.Reset()
		if !seen[t] && len(terms) < maxQueryTerms {
			seen[t] = true
			terms = append(terms, `"`+t+`"`)
		}
	}
	for _, r := range text {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) && b.Len() > 0 {
			if b.Len()+len(string(r)) <= maxTermBytes {
				b.WriteRune(r)
			}
			continue
		}
		flush()
	}
	flush()
	return terms
}
