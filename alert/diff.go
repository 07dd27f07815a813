package alert

import (
	"strconv"
	"strings"
)

// diffBudget bounds the work of one Diff (comparisons plus diagonals
// visited). Beyond it the remaining differing regions are reported as
// replaced wholesale: still a correct diff, no longer a minimal one.
const diffBudget = 1 << 21

// Diff returns a unified diff from oldText to newText with the labels "old"
// and "new" and context lines of context around each change (a negative
// context counts as 0). It returns "" when the texts are equal. See
// UnifiedDiff.
func Diff(oldText, newText string, context int) string {
	return UnifiedDiff("old", "new", oldText, newText, context)
}

// UnifiedDiff returns a unified diff from oldText to newText in the format
// of diff -u and patch: a "--- oldLabel" and a "+++ newLabel" line, then
// hunks headed "@@ -a,b +c,d @@" (",1" is left out, as diff does). Lines end
// at "\n"; a last line without one is followed by "\ No newline at end of
// file". Hunks whose context would overlap are merged.
//
// Lines are matched with Myers' O(ND) algorithm in linear space, so the diff
// is minimal for ordinary inputs. On very large, very different inputs the
// search stops after a fixed amount of work and the rest of each differing
// region is shown as deleted then added, which still applies correctly.
// It returns "" when the texts are equal.
func UnifiedDiff(oldLabel, newLabel, oldText, newText string, context int) string {
	if oldText == newText {
		return ""
	}
	if context < 0 {
		context = 0
	}
	a, b := splitLines(oldText), splitLines(newText)
	ia, ib := intern(a, b)
	d := differ{a: ia, b: ib, delA: make([]bool, len(a)), insB: make([]bool, len(b)), budget: diffBudget}
	d.compare(0, len(a), 0, len(b))
	ops := script(d.delA, d.insB)

	var sb strings.Builder
	sb.Grow(len(oldText) + len(newText) + 64)
	sb.WriteString("--- ")
	sb.WriteString(oldLabel)
	sb.WriteString("\n+++ ")
	sb.WriteString(newLabel)
	sb.WriteString("\n")
	writeHunks(&sb, ops, a, b, context)
	return sb.String()
}

// splitLines cuts s after every "\n"; each line keeps its "\n" except a
// last line that had none.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	lines := make([]string, 0, strings.Count(s, "\n")+1)
	for len(s) > 0 {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			lines = append(lines, s)
			break
		}
		lines = append(lines, s[:i+1])
		s = s[i+1:]
	}
	return lines
}

// intern numbers the distinct lines so the diff compares ints.
func intern(a, b []string) ([]int, []int) {
	ids := make(map[string]int, len(a))
	conv := func(lines []string) []int {
		out := make([]int, len(lines))
		for i, l := range lines {
			id, ok := ids[l]
			if !ok {
				id = len(ids)
				ids[l] = id
			}
			out[i] = id
		}
		return out
	}
	return conv(a), conv(b)
}

// differ marks the lines of a that are deleted and of b that are inserted.
type differ struct {
	a, b       []int
	delA, insB []bool
	vf, vb     []int
	budget     int
}

// compare diffs a[aLo:aHi] against b[bLo:bHi].
func (d *differ) compare(aLo, aHi, bLo, bHi int) {
	for aLo < aHi && bLo < bHi && d.a[aLo] == d.b[bLo] {
		aLo, bLo = aLo+1, bLo+1
	}
	for aLo < aHi && bLo < bHi && d.a[aHi-1] == d.b[bHi-1] {
		aHi, bHi = aHi-1, bHi-1
	}
	switch {
	case aLo == aHi:
		for j := bLo; j < bHi; j++ {
			d.insB[j] = true
		}
		return
	case bLo == bHi:
		for i := aLo; i < aHi; i++ {
			d.delA[i] = true
		}
		return
	}
	x, y, u, v, ok := d.middleSnake(aLo, aHi, bLo, bHi)
	whole := (x == aLo && y == bLo && u == aLo && v == bLo) || (x == aHi && y == bHi)
	if !ok || whole {
		for i := aLo; i < aHi; i++ {
			d.delA[i] = true
		}
		for j := bLo; j < bHi; j++ {
			d.insB[j] = true
		}
		return
	}
	d.compare(aLo, x, bLo, y)
	d.compare(u, aHi, v, bHi)
}

// middleSnake finds the middle snake of an optimal path from (aLo, bLo) to
// (aHi, bHi) by searching forward from the start and backward from the end
// at once (Myers 1986, section 4b). It returns the snake's start (x, y) and
// end (u, v) in absolute coordinates, or ok=false when the budget ran out.
func (d *differ) middleSnake(aLo, aHi, bLo, bHi int) (x, y, u, v int, ok bool) {
	n, m := aHi-aLo, bHi-bLo
	delta := n - m
	odd := delta&1 != 0
	maxD := (n + m + 1) / 2
	off := maxD + 1
	size := 2*maxD + 3
	if cap(d.vf) < size {
		d.vf = make([]int, size)
		d.vb = make([]int, size)
	}
	vf, vb := d.vf[:size], d.vb[:size]
	vf[off+1], vb[off+1] = 0, 0
	a, b := d.a, d.b
	for D := 0; D <= maxD; D++ {
		d.budget -= 2 * (D + 1)
		if d.budget < 0 {
			return 0, 0, 0, 0, false
		}
		// Forward: furthest x on each diagonal k = x - y.
		for k := -D; k <= D; k += 2 {
			var px int
			if k == -D || (k != D && vf[off+k-1] < vf[off+k+1]) {
				px = vf[off+k+1]
			} else {
				px = vf[off+k-1] + 1
			}
			py := px - k
			sx, sy := px, py
			for px < n && py < m && a[aLo+px] == b[bLo+py] {
				px, py = px+1, py+1
			}
			d.budget -= px - sx
			vf[off+k] = px
			if kr := delta - k; odd && kr >= -(D-1) && kr <= D-1 && px+vb[off+kr] >= n {
				return aLo + sx, bLo + sy, aLo + px, bLo + py, true
			}
		}
		// Backward, on the reversed sequences: diagonal kr = xr - yr where
		// xr = n - x and yr = m - y.
		for kr := -D; kr <= D; kr += 2 {
			var px int
			if kr == -D || (kr != D && vb[off+kr-1] < vb[off+kr+1]) {
				px = vb[off+kr+1]
			} else {
				px = vb[off+kr-1] + 1
			}
			py := px - kr
			sx, sy := px, py
			for px < n && py < m && a[aHi-1-px] == b[bHi-1-py] {
				px, py = px+1, py+1
			}
			d.budget -= px - sx
			vb[off+kr] = px
			if k := delta - kr; !odd && k >= -D && k <= D && vf[off+k]+px >= n {
				return aHi - px, bHi - py, aHi - sx, bHi - sy, true
			}
		}
	}
	return 0, 0, 0, 0, false // unreachable: the paths meet by D = maxD
}

type opKind uint8

const (
	opEqual opKind = iota
	opDelete
	opInsert
)

// op is one line of the edit script: i indexes the old lines, j the new.
type op struct {
	kind opKind
	i, j int
}

// script turns the marks into an edit script, deletions before insertions
// within each change.
func script(delA, insB []bool) []op {
	ops := make([]op, 0, max(len(delA), len(insB)))
	i, j := 0, 0
	for i < len(delA) || j < len(insB) {
		for i < len(delA) && delA[i] {
			ops = append(ops, op{opDelete, i, j})
			i++
		}
		for j < len(insB) && insB[j] {
			ops = append(ops, op{opInsert, i, j})
			j++
		}
		if i < len(delA) && j < len(insB) {
			ops = append(ops, op{opEqual, i, j})
			i, j = i+1, j+1
		}
	}
	return ops
}

// writeHunks writes the hunks of ops with context lines around changes.
func writeHunks(sb *strings.Builder, ops []op, a, b []string, context int) {
	for start := 0; start < len(ops); {
		// Find the next change.
		first := start
		for first < len(ops) && ops[first].kind == opEqual {
			first++
		}
		if first == len(ops) {
			return
		}
		// Extend over changes separated by at most 2*context equal lines.
		last := first
		for k := first + 1; k < len(ops); k++ {
			if ops[k].kind != opEqual {
				if k-last-1 > 2*context {
					break
				}
				last = k
			}
		}
		lo := max(first-context, start)
		hi := min(last+context+1, len(ops))
		writeHunk(sb, ops[lo:hi], a, b)
		start = hi
	}
}

func writeHunk(sb *strings.Builder, ops []op, a, b []string) {
	oldCount, newCount := 0, 0
	for _, o := range ops {
		if o.kind != opInsert {
			oldCount++
		}
		if o.kind != opDelete {
			newCount++
		}
	}
	sb.WriteString("@@ -")
	writeRange(sb, ops[0].i, oldCount)
	sb.WriteString(" +")
	writeRange(sb, ops[0].j, newCount)
	sb.WriteString(" @@\n")
	for _, o := range ops {
		var line string
		switch o.kind {
		case opEqual:
			sb.WriteByte(' ')
			line = a[o.i]
		case opDelete:
			sb.WriteByte('-')
			line = a[o.i]
		case opInsert:
			sb.WriteByte('+')
			line = b[o.j]
		}
		sb.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

// writeRange writes a hunk range: the 1-based first line and the count,
// ",1" left out; an empty range names the line before it.
func writeRange(sb *strings.Builder, first0, count int) {
	if count == 0 {
		sb.WriteString(strconv.Itoa(first0))
		sb.WriteString(",0")
		return
	}
	sb.WriteString(strconv.Itoa(first0 + 1))
	if count != 1 {
		sb.WriteByte(',')
		sb.WriteString(strconv.Itoa(count))
	}
}
