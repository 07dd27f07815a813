package alert_test

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/alert"
)

// Expected outputs are what GNU diff -U<context> --label old --label new
// prints for the same inputs.
func TestDiffCases(t *testing.T) {
	const h = "--- old\n+++ new\n"
	fifteen := "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n11\n12\n13\n14\n15\n"
	eight := "1\n2\n3\n4\n5\n6\n7\n8\n"
	eightChanged := "1\n2x\n3\n4\n5\n6\n7x\n8\n"
	cases := []struct {
		name     string
		old, new string
		context  int
		want     string
	}{
		{"equal", "a\nb\n", "a\nb\n", 3, ""},
		{"both empty", "", "", 3, ""},
		{"empty old", "", "a\nb\n", 3, h + "@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"empty new", "a\nb\n", "", 3, h + "@@ -1,2 +0,0 @@\n-a\n-b\n"},
		{"pure insertion", "a\nb\nc\nd\n", "a\nb\nX\nc\nd\n", 1, h + "@@ -2,2 +2,3 @@\n b\n+X\n c\n"},
		{"pure deletion", "a\nb\nc\nd\ne\n", "a\nb\nd\ne\n", 1, h + "@@ -2,3 +2,2 @@\n b\n-c\n d\n"},
		{"insert at start, no context", "b\n", "a\nb\n", 0, h + "@@ -0,0 +1 @@\n+a\n"},
		{"delete at end, no context", "a\nb\n", "a\n", 0, h + "@@ -2 +1,0 @@\n-b\n"},
		{"replace, no context", "a\nb\nc\n", "a\nx\nc\n", 0, h + "@@ -2 +2 @@\n-b\n+x\n"},
		{"negative context is zero", "a\nb\nc\n", "a\nx\nc\n", -4, h + "@@ -2 +2 @@\n-b\n+x\n"},
		{"multiple hunks", fifteen, strings.Replace(strings.Replace(fifteen, "\n2\n", "\n2x\n", 1), "14\n", "14x\n", 1), 3,
			h + "@@ -1,5 +1,5 @@\n 1\n-2\n+2x\n 3\n 4\n 5\n@@ -11,5 +11,5 @@\n 11\n 12\n 13\n-14\n+14x\n 15\n"},
		{"context merges hunks", eight, eightChanged, 3,
			h + "@@ -1,8 +1,8 @@\n 1\n-2\n+2x\n 3\n 4\n 5\n 6\n-7\n+7x\n 8\n"},
		{"gap of exactly twice the context merges", eight, eightChanged, 2,
			h + "@@ -1,8 +1,8 @@\n 1\n-2\n+2x\n 3\n 4\n 5\n 6\n-7\n+7x\n 8\n"},
		{"gap over twice the context splits", eight, eightChanged, 1,
			h + "@@ -1,3 +1,3 @@\n 1\n-2\n+2x\n 3\n@@ -6,3 +6,3 @@\n 6\n-7\n+7x\n 8\n"},
		{"newline added at end", "a\nb", "a\nb\n", 3, h + "@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n"},
		{"newline removed at end", "a\nb\n", "a\nb", 3, h + "@@ -1,2 +1,2 @@\n a\n-b\n+b\n\\ No newline at end of file\n"},
		{"no newline on either side", "a\nb\nc", "a\nb\nd", 3,
			h + "@@ -1,3 +1,3 @@\n a\n b\n-c\n\\ No newline at end of file\n+d\n\\ No newline at end of file\n"},
		{"shared last line without newline", "a\nz", "b\nz", 3, h + "@@ -1,2 +1,2 @@\n-a\n+b\n z\n\\ No newline at end of file\n"},
		{"single line to no newline", "x\n", "y", 3, h + "@@ -1 +1 @@\n-x\n+y\n\\ No newline at end of file\n"},
		{"CR stays in the line", "a\r\nb\r\n", "a\r\nc\r\n", 3, h + "@@ -1,2 +1,2 @@\n a\r\n-b\r\n+c\r\n"},
		{"Chinese text", "## 增量抓取\n旧的说明。\n结尾\n", "## 增量抓取\n新的说明。\n结尾\n", 1,
			h + "@@ -1,3 +1,3 @@\n ## 增量抓取\n-旧的说明。\n+新的说明。\n 结尾\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := alert.Diff(c.old, c.new, c.context)
			require.Equal(t, c.want, got)
			back, err := applyPatch(c.old, got)
			require.NoError(t, err)
			require.Equal(t, c.new, back)
		})
	}
}

func TestUnifiedDiffLabels(t *testing.T) {
	got := alert.UnifiedDiff("a/page.md", "b/page.md", "x\n", "y\n", 3)
	require.Equal(t, "--- a/page.md\n+++ b/page.md\n@@ -1 +1 @@\n-x\n+y\n", got)
}

// randomText draws lines from a small alphabet so that texts share lines,
// sometimes without a final newline.
func randomText(r *rand.Rand, maxLines int) string {
	alphabet := []string{"a", "b", "c", "d", "", "e e", "增量"}
	n := r.IntN(maxLines + 1)
	var sb strings.Builder
	for i := 0; i < n; i++ {
		sb.WriteString(alphabet[r.IntN(len(alphabet))])
		if i < n-1 || r.IntN(4) != 0 {
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

// lcs is the textbook dynamic program, to check that Diff is minimal.
func lcs(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			switch {
			case a[i-1] == b[j-1]:
				cur[j] = prev[j-1] + 1
			case prev[j] >= cur[j-1]:
				cur[j] = prev[j]
			default:
				cur[j] = cur[j-1]
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func lines(s string) []string {
	l := strings.SplitAfter(s, "\n")
	if l[len(l)-1] == "" {
		l = l[:len(l)-1]
	}
	return l
}

// changedLines counts the - and + lines of a diff.
func changedLines(diff string) int {
	n := 0
	for _, l := range lines(diff) {
		if (l[0] == '-' || l[0] == '+') && !strings.HasPrefix(l, "--- ") && !strings.HasPrefix(l, "+++ ") {
			n++
		}
	}
	return n
}

func TestDiffPropertyAppliesBackAndIsMinimal(t *testing.T) {
	r := rand.New(rand.NewPCG(2026, 3))
	for i := 0; i < 3000; i++ {
		old, new := randomText(r, 30), randomText(r, 30)
		ctx := r.IntN(5)
		d := alert.Diff(old, new, ctx)
		back, err := applyPatch(old, d)
		require.NoError(t, err, "case %d: old %q new %q\n%s", i, old, new, d)
		require.Equal(t, new, back, "case %d", i)
		a, b := lines(old), lines(new)
		require.Equal(t, len(a)+len(b)-2*lcs(a, b), changedLines(d), "case %d not minimal: old %q new %q\n%s", i, old, new, d)
		// And the other way round.
		rev, err := applyPatch(new, alert.Diff(new, old, ctx))
		require.NoError(t, err)
		require.Equal(t, old, rev)
	}
}

// editLines applies n random line edits (insert, delete, replace) to text.
func editLines(r *rand.Rand, text string, n int) string {
	l := lines(text)
	for i := 0; i < n && len(l) > 0; i++ {
		p := r.IntN(len(l))
		switch r.IntN(3) {
		case 0:
			l = append(l[:p], append([]string{fmt.Sprintf("inserted line %d\n", i)}, l[p:]...)...)
		case 1:
			l = append(l[:p], l[p+1:]...)
		default:
			l[p] = fmt.Sprintf("replaced line %d\n", i)
		}
	}
	return strings.Join(l, "")
}

func TestDiffRealDocumentEdits(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, name := range []string{"realworld_anthropic.txt", "realworld_turso.txt"} {
		raw, err := os.ReadFile(filepath.Join("testdata", "corpus", name))
		require.NoError(t, err)
		doc := string(raw)
		for _, edits := range []int{1, 5, 40} {
			t.Run(fmt.Sprintf("%s/%d edits", name, edits), func(t *testing.T) {
				edited := editLines(r, doc, edits)
				d := alert.Diff(doc, edited, 3)
				back, err := applyPatch(doc, d)
				require.NoError(t, err)
				require.Equal(t, edited, back)
				// Each edit touches at most two lines of output.
				require.LessOrEqual(t, changedLines(d), 2*edits)
				require.Positive(t, changedLines(d))
			})
		}
	}
}

// Past go-udiff's search depth the diff is no longer minimal but still
// correct.
func TestDiffLargeDissimilarInputsStayCorrect(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 5))
	gen := func(n int) string {
		var sb strings.Builder
		for i := 0; i < n; i++ {
			fmt.Fprintf(&sb, "line %d\n", r.IntN(400))
		}
		return sb.String()
	}
	old, new := gen(20000), gen(20000)
	d := alert.Diff(old, new, 3)
	back, err := applyPatch(old, d)
	require.NoError(t, err)
	require.Equal(t, new, back)
	require.LessOrEqual(t, changedLines(d), 40000)
}

// GNU patch, when installed, applies Diff's output: the format is the real
// one, not only what our own applier accepts. With
// RECRAWL_TEST_REQUIRE_PATCH set (CI sets it) a missing patch fails.
func TestDiffAppliesWithGNUPatch(t *testing.T) {
	patchBin, err := exec.LookPath("patch")
	if err != nil {
		if os.Getenv("RECRAWL_TEST_REQUIRE_PATCH") != "" {
			t.Fatalf("RECRAWL_TEST_REQUIRE_PATCH is set and GNU patch is not on PATH: %v", err)
		}
		t.Skip("patch not installed")
	}
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(9, 9))
	doc, err := os.ReadFile(filepath.Join("testdata", "corpus", "realworld_turso.txt"))
	require.NoError(t, err)
	type pair struct{ old, new string }
	pairs := []pair{{string(doc), editLines(r, string(doc), 12)}, {"", "a\n"}, {"a\nb", "a\nc"}, {"x\n", "y"}}
	for i := 0; i < 60; i++ {
		pairs = append(pairs, pair{randomText(r, 20), randomText(r, 20)})
	}
	for i, p := range pairs {
		d := alert.UnifiedDiff("a/f.txt", "b/f.txt", p.old, p.new, i%4)
		if d == "" {
			continue
		}
		oldPath, outPath := filepath.Join(dir, "f.txt"), filepath.Join(dir, "out.txt")
		require.NoError(t, os.WriteFile(oldPath, []byte(p.old), 0o600))
		cmd := exec.Command(patchBin, "--force", "--silent", "--batch", "-o", outPath, oldPath)
		cmd.Stdin = strings.NewReader(d)
		var stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stderr, &stderr
		require.NoError(t, cmd.Run(), "case %d: %s\n%s", i, stderr.String(), d)
		got, err := os.ReadFile(outPath)
		require.NoError(t, err)
		require.Equal(t, p.new, string(got), "case %d", i)
	}
}
