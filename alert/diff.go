package alert

import (
	"strconv"
	"strings"

	"github.com/aymanbagabas/go-udiff"
)

// Diff returns a unified diff from oldText to newText with the labels "old"
// and "new" and context lines of context around each change (a negative
// context counts as 0). It returns "" when the texts are equal. See
// UnifiedDiff.
func Diff(oldText, newText string, context int) string {
	return UnifiedDiff("old", "new", oldText, newText, context)
}

// UnifiedDiff returns a unified diff from oldText to newText in the format
// of diff -u and patch: a "--- oldLabel" and a "+++ newLabel" line, then
// hunks headed "@@ -a,b +c,d @@" (",1" is left out, as diff does, and an
// empty range names the line before it). Lines end at "\n"; a last line
// without one is followed by "\ No newline at end of file". Hunks whose
// context would overlap are merged.
//
// The lines are matched by github.com/aymanbagabas/go-udiff (the diff of
// the Go tools), whose search stops at a fixed depth: the diff is minimal
// while the texts differ in a few dozen places, and past that the middle of
// the differing region is shown as deleted then added. Either way it
// applies correctly, and time and memory stay linear in the input.
// It returns "" when the texts are equal.
func UnifiedDiff(oldLabel, newLabel, oldText, newText string, context int) string {
	if oldText == newText {
		return ""
	}
	u, err := udiff.ToUnifiedDiff(oldLabel, newLabel, oldText, udiff.Lines(oldText, newText), max(context, 0))
	if err != nil {
		// Lines computes edits of oldText itself: they are in order and in
		// bounds, the only things ToUnifiedDiff checks.
		panic("alert: go-udiff rejected its own edits: " + err.Error())
	}
	return format(u)
}

// format writes u as text. udiff's own UnifiedDiff.String writes an empty
// range not at the file's start as "-N" (one line), which patch misreads;
// here it is "-N,0" naming the line before, as GNU diff writes it.
func format(u udiff.UnifiedDiff) string {
	const noNewline = "\n\\ No newline at end of file\n"
	size := len(u.From) + len(u.To) + 10
	for _, h := range u.Hunks {
		size += 64 // the header
		for _, l := range h.Lines {
			size += 1 + len(l.Content)
			if !strings.HasSuffix(l.Content, "\n") {
				size += len(noNewline)
			}
		}
	}
	var sb strings.Builder
	sb.Grow(size)
	sb.WriteString("--- ")
	sb.WriteString(u.From)
	sb.WriteString("\n+++ ")
	sb.WriteString(u.To)
	sb.WriteString("\n")
	for _, h := range u.Hunks {
		oldCount, newCount := 0, 0
		for _, l := range h.Lines {
			if l.Kind != udiff.Insert {
				oldCount++
			}
			if l.Kind != udiff.Delete {
				newCount++
			}
		}
		sb.WriteString("@@ -")
		writeRange(&sb, h.FromLine, oldCount)
		sb.WriteString(" +")
		writeRange(&sb, h.ToLine, newCount)
		sb.WriteString(" @@\n")
		for _, l := range h.Lines {
			switch l.Kind {
			case udiff.Equal:
				sb.WriteByte(' ')
			case udiff.Delete:
				sb.WriteByte('-')
			case udiff.Insert:
				sb.WriteByte('+')
			}
			sb.WriteString(l.Content)
			if !strings.HasSuffix(l.Content, "\n") {
				sb.WriteString(noNewline)
			}
		}
	}
	return sb.String()
}

// writeRange writes a hunk range from its 1-based first line and its
// count, ",1" left out; an empty range names the line before it.
func writeRange(sb *strings.Builder, first, count int) {
	if count == 0 {
		sb.WriteString(strconv.Itoa(first - 1))
		sb.WriteString(",0")
		return
	}
	sb.WriteString(strconv.Itoa(first))
	if count != 1 {
		sb.WriteByte(',')
		sb.WriteString(strconv.Itoa(count))
	}
}
