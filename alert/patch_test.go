package alert_test

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// applyPatch applies a unified diff to old, strictly: every context and
// deleted line must match, hunks must be in order, and each header's counts
// must equal its lines. It exists to check Diff's output independently.
func applyPatch(old, diff string) (string, error) {
	if diff == "" {
		return old, nil
	}
	lines := strings.SplitAfter(diff, "\n")
	if lines[len(lines)-1] != "" {
		return "", fmt.Errorf("diff does not end with a newline")
	}
	lines = lines[:len(lines)-1]
	if len(lines) < 3 || !strings.HasPrefix(lines[0], "--- ") || !strings.HasPrefix(lines[1], "+++ ") {
		return "", fmt.Errorf("missing ---/+++ header or hunks")
	}
	oldLines := strings.SplitAfter(old, "\n")
	if oldLines[len(oldLines)-1] == "" {
		oldLines = oldLines[:len(oldLines)-1]
	}
	var out strings.Builder
	pos, written := 0, 0
	for i := 2; i < len(lines); {
		oldStart, oldCount, newStart, newCount, err := parseHunkHeader(lines[i])
		if err != nil {
			return "", err
		}
		i++
		at := oldStart - 1
		if oldCount == 0 {
			at = oldStart
		}
		if at < pos || at > len(oldLines) {
			return "", fmt.Errorf("hunk %q starts at old line %d, before %d or past the end", lines[i-1], at+1, pos+1)
		}
		for ; pos < at; pos++ {
			out.WriteString(oldLines[pos])
			written++
		}
		wantNew := newStart - 1
		if newCount == 0 {
			wantNew = newStart
		}
		if wantNew != written {
			return "", fmt.Errorf("hunk %q: new side starts at line %d, output is at %d", lines[i-1], wantNew+1, written+1)
		}
		gotOld, gotNew := 0, 0
		for i < len(lines) && !strings.HasPrefix(lines[i], "@@") {
			l := lines[i]
			i++
			if len(l) < 2 {
				return "", fmt.Errorf("bad hunk line %q", l)
			}
			content := l[1:]
			if i < len(lines) && lines[i] == "\\ No newline at end of file\n" {
				content = strings.TrimSuffix(content, "\n")
				i++
			}
			switch l[0] {
			case ' ', '-':
				if pos >= len(oldLines) || oldLines[pos] != content {
					return "", fmt.Errorf("line %q does not match old line %d", l, pos+1)
				}
				pos++
				gotOld++
				if l[0] == ' ' {
					out.WriteString(content)
					written++
					gotNew++
				}
			case '+':
				out.WriteString(content)
				written++
				gotNew++
			default:
				return "", fmt.Errorf("bad hunk line %q", l)
			}
		}
		if gotOld != oldCount || gotNew != newCount {
			return "", fmt.Errorf("hunk header says -%d +%d, body has -%d +%d", oldCount, newCount, gotOld, gotNew)
		}
	}
	for ; pos < len(oldLines); pos++ {
		out.WriteString(oldLines[pos])
	}
	return out.String(), nil
}

var hunkHeader = regexp.MustCompile(`^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@\n$`)

func parseHunkHeader(l string) (oldStart, oldCount, newStart, newCount int, err error) {
	m := hunkHeader.FindStringSubmatch(l)
	if m == nil {
		return 0, 0, 0, 0, fmt.Errorf("bad hunk header %q", l)
	}
	num := func(s string) int {
		if s == "" {
			return 1
		}
		n, _ := strconv.Atoi(s)
		return n
	}
	return num(m[1]), num(m[2]), num(m[3]), num(m[4]), nil
}

// The applier must reject what does not match, or the property tests that
// rely on it could not fail.
func TestApplyPatchRejectsMismatches(t *testing.T) {
	good := "--- old\n+++ new\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n"
	got, err := applyPatch("a\nb\n", good)
	require.NoError(t, err)
	require.Equal(t, "a\nc\n", got)
	bad := []struct{ name, old, diff string }{
		{"context differs", "x\nb\n", good},
		{"deleted line differs", "a\nz\n", good},
		{"count wrong", "a\nb\n", "--- old\n+++ new\n@@ -1,3 +1,2 @@\n a\n-b\n+c\n"},
		{"no header", "a\nb\n", "@@ -1,2 +1,2 @@\n a\n-b\n+c\n"},
		{"garbage line", "a\nb\n", "--- old\n+++ new\n@@ -1,2 +1,2 @@\n a\n*b\n+c\n"},
		{"past the end", "a\n", "--- old\n+++ new\n@@ -5 +5 @@\n-a\n+b\n"},
		{"missing newline marker", "a", "--- old\n+++ new\n@@ -1 +1 @@\n-a\n+b\n"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := applyPatch(c.old, c.diff)
			require.Error(t, err)
		})
	}
}
