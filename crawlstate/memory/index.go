package memory

import (
	"sort"
	"strings"
	"time"
)

// entry is a row's place in an ordered index: the key fields it was
// indexed with (copies, so the row can change before it is re-indexed)
// and the row.
type entry struct {
	at  time.Time // NextCheck when indexed; unused by the URL order
	url string
	p   *page
}

// cmpTime orders instants with the zero time before every other one, as
// the due queue does ("due now").
func cmpTime(a, b time.Time) int {
	az, bz := a.IsZero(), b.IsZero()
	switch {
	case az && bz:
		return 0
	case az:
		return -1
	case bz:
		return 1
	}
	return a.Compare(b)
}

// cmpDue is the due queue's order: (NextCheck, URL).
func cmpDue(a, b entry) int {
	if c := cmpTime(a.at, b.at); c != 0 {
		return c
	}
	return strings.Compare(a.url, b.url)
}

// cmpURL is the URL order of the live rows.
func cmpURL(a, b entry) int { return strings.Compare(a.url, b.url) }

// maxBlock is the most entries a block of a sortedList holds before it
// splits in two.
const maxBlock = 512

// sortedList is an ordered set of entries with distinct keys: a list of
// sorted blocks of at most maxBlock entries. Finding a position is two
// binary searches; inserting or deleting moves at most one block's
// entries. It is not safe for concurrent use.
type sortedList struct {
	cmp    func(a, b entry) int
	blocks [][]entry
	n      int
}

func newList(cmp func(a, b entry) int) sortedList { return sortedList{cmp: cmp} }

// Len returns the number of entries.
func (l *sortedList) Len() int { return l.n }

// blockFor returns the index of the first block whose last entry is at or
// after e (after e when strict), or len(l.blocks) when there is none.
func (l *sortedList) blockFor(e entry, strict bool) int {
	return sort.Search(len(l.blocks), func(i int) bool {
		b := l.blocks[i]
		c := l.cmp(b[len(b)-1], e)
		return c > 0 || (!strict && c == 0)
	})
}

// posIn returns the position of the first entry of b at or after e (after
// e when strict).
func (l *sortedList) posIn(b []entry, e entry, strict bool) int {
	return sort.Search(len(b), func(i int) bool {
		c := l.cmp(b[i], e)
		return c > 0 || (!strict && c == 0)
	})
}

// insert adds e, whose key must not be in the list.
func (l *sortedList) insert(e entry) {
	l.n++
	if len(l.blocks) == 0 {
		b := make([]entry, 1, 16)
		b[0] = e
		l.blocks = append(l.blocks, b)
		return
	}
	bi := l.blockFor(e, false)
	if bi == len(l.blocks) {
		bi--
	}
	b := l.blocks[bi]
	i := l.posIn(b, e, false)
	b = append(b, entry{})
	copy(b[i+1:], b[i:])
	b[i] = e
	if len(b) <= maxBlock {
		l.blocks[bi] = b
		return
	}
	half := len(b) / 2
	right := make([]entry, len(b)-half, maxBlock+1)
	copy(right, b[half:])
	clear(b[half:]) // drop the moved rows' pointers
	l.blocks[bi] = b[:half]
	l.blocks = append(l.blocks, nil)
	copy(l.blocks[bi+2:], l.blocks[bi+1:])
	l.blocks[bi+1] = right
}

// delete removes the entry with e's key; it reports whether there was one.
func (l *sortedList) delete(e entry) bool {
	bi := l.blockFor(e, false)
	if bi == len(l.blocks) {
		return false
	}
	b := l.blocks[bi]
	i := l.posIn(b, e, false)
	if i == len(b) || l.cmp(b[i], e) != 0 {
		return false
	}
	copy(b[i:], b[i+1:])
	b[len(b)-1] = entry{}
	b = b[:len(b)-1]
	l.n--
	if len(b) > 0 {
		l.blocks[bi] = b
		return true
	}
	copy(l.blocks[bi:], l.blocks[bi+1:])
	l.blocks[len(l.blocks)-1] = nil
	l.blocks = l.blocks[:len(l.blocks)-1]
	return true
}

// build fills an empty list with entries, which must be sorted and
// distinct; the list keeps no reference to the slice.
func (l *sortedList) build(sorted []entry) {
	const fill = maxBlock * 3 / 4 // room to insert without splitting at once
	for len(sorted) > 0 {
		k := min(len(sorted), fill)
		b := make([]entry, k, maxBlock+1)
		copy(b, sorted[:k])
		l.blocks = append(l.blocks, b)
		sorted = sorted[k:]
		l.n += k
	}
}

// first returns the first entry; ok is false when the list is empty.
func (l *sortedList) first() (e entry, ok bool) {
	if len(l.blocks) == 0 {
		return entry{}, false
	}
	return l.blocks[0][0], true
}

// ascend calls fn for each entry after pivot in order (from pivot on,
// pivot included, when not strict) until fn returns false. fn must not
// change the list.
func (l *sortedList) ascend(pivot entry, strict bool, fn func(entry) bool) {
	bi := l.blockFor(pivot, strict)
	if bi == len(l.blocks) {
		return
	}
	i := l.posIn(l.blocks[bi], pivot, strict)
	for ; bi < len(l.blocks); bi++ {
		for _, e := range l.blocks[bi][i:] {
			if !fn(e) {
				return
			}
		}
		i = 0
	}
}

// all calls fn for every entry in order until fn returns false. fn must
// not change the list.
func (l *sortedList) all(fn func(entry) bool) {
	for _, b := range l.blocks {
		for _, e := range b {
			if !fn(e) {
				return
			}
		}
	}
}
