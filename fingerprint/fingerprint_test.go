package fingerprint_test

import (
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"os"
	"path/filepath"
	"regexp/syntax"
	"strings"
	"sync"
	"testing"

	"errors"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/fingerprint"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func readFile(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	require.NoError(t, err)
	return string(b)
}

// golden compares got with testdata/name, or rewrites the file with -update.
func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create %s", path)
	require.Equal(t, string(want), got, "golden file %s differs; inspect the change, then run go test -update", path)
}

func sha256hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestOfIsHashOfStrip(t *testing.T) {
	inputs := []string{
		"",
		"\n\n  \n",
		"plain text",
		readFile(t, "page_run1.md"),
		readFile(t, "page_run2.md"),
		"## Related posts\n* only related",
		"bad utf-8 \xff\xfe\xfd 14:02:11",
	}
	for _, rs := range []fingerprint.Rules{fingerprint.Default, nil, fingerprint.Default.Without("whitespace-runs")} {
		for _, in := range inputs {
			require.Equal(t, sha256hex(rs.Strip(in)), rs.Of(in))
		}
	}
	require.Equal(t, fingerprint.Default.Of("a 14:02:11"), fingerprint.Of("a 14:02:11"))
	require.Equal(t, fingerprint.Default.Strip("a 14:02:11"), fingerprint.Strip("a 14:02:11"))
	// The hash of nothing is the SHA-256 of the empty string.
	require.Equal(t, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855", fingerprint.Of(" \n\t\n"))
}

func TestVolatileBlocksDoNotChangeTheHash(t *testing.T) {
	run1, run2 := readFile(t, "page_run1.md"), readFile(t, "page_run2.md")
	// Without rules the two fetches hash differently ...
	require.NotEqual(t, fingerprint.Rules(nil).Of(run1), fingerprint.Rules(nil).Of(run2))
	// ... with Default they are the same page.
	require.Equal(t, fingerprint.Of(run1), fingerprint.Of(run2))
	require.Equal(t, fingerprint.Strip(run1), fingerprint.Strip(run2))
}

func TestRealEditChangesTheHash(t *testing.T) {
	run2, edited := readFile(t, "page_run2.md"), readFile(t, "page_edited.md")
	require.NotEqual(t, fingerprint.Of(run2), fingerprint.Of(edited))

	base := "# Guide\n\nInstall with `go get`.\n\n## Related posts\n* x\n\n## Usage\nCall Run.\n"
	for name, edit := range map[string]string{
		"word":            "# Guide\n\nInstall with `go install`.\n\n## Related posts\n* x\n\n## Usage\nCall Run.\n",
		"heading":         "# Guide\n\nInstall with `go get`.\n\n## Related posts\n* x\n\n## How to use\nCall Run.\n",
		"after section":   "# Guide\n\nInstall with `go get`.\n\n## Related posts\n* x\n\n## Usage\nCall Run twice.\n",
		"new line":        "# Guide\n\nInstall with `go get`.\nThen build.\n\n## Related posts\n* x\n\n## Usage\nCall Run.\n",
		"date in prose":   "# Guide\n\nInstall with `go get` (since 2025).\n\n## Related posts\n* x\n\n## Usage\nCall Run.\n",
		"version":         "# Guide\n\nInstall with `go get` v1.2.4.\n\n## Related posts\n* x\n\n## Usage\nCall Run.\n",
		"bare clock":      "# Guide\n\nInstall with `go get` at 10:30.\n\n## Related posts\n* x\n\n## Usage\nCall Run.\n",
		"lines reordered": "# Guide\n\n## Usage\nCall Run.\n\nInstall with `go get`.\n\n## Related posts\n* x\n",
	} {
		require.NotEqual(t, fingerprint.Of(base), fingerprint.Of(edit), name)
	}
	// Whitespace and the related list alone are not edits.
	require.Equal(t, fingerprint.Of(base), fingerprint.Of("# Guide\r\n\r\n   Install  with `go get`.  \n## Related posts\n* y\n* z\n## Usage\nCall\tRun.\n\n\n"))
}

// The golden file shows exactly what is hashed for the sample page.
func TestStripGolden(t *testing.T) {
	golden(t, "page_run1.stripped.md", fingerprint.Strip(readFile(t, "page_run1.md")))
}

func TestStripIsIdempotentOnPages(t *testing.T) {
	for _, name := range []string{"page_run1.md", "page_run2.md", "page_edited.md"} {
		once := fingerprint.Strip(readFile(t, name))
		require.Equal(t, once, fingerprint.Strip(once), name)
	}
}

func TestExtensionDoesNotMutateDefault(t *testing.T) {
	names := fingerprint.Default.Names()
	n, c := len(fingerprint.Default), cap(fingerprint.Default)
	sample := readFile(t, "page_run1.md")
	before := fingerprint.Of(sample)

	extra := fingerprint.MustRegexp("drop-word", `waste`, "")
	extended := fingerprint.Default.With(extra)
	reduced := fingerprint.Default.Without("tokens", "iso-timestamps")
	appended := append(fingerprint.Default, extra) //nolint:gocritic // checks that append copies
	extended[0] = extra
	reduced[0] = extra
	appended[0] = extra
	_ = fingerprint.Set{PerHost: map[string]fingerprint.Rules{"a.example": {extra}}}.For("a.example")

	require.Equal(t, names, fingerprint.Default.Names())
	require.Equal(t, n, len(fingerprint.Default))
	require.Equal(t, c, cap(fingerprint.Default))
	require.Equal(t, before, fingerprint.Of(sample))
	require.Len(t, reduced, n-2)
	require.NotContains(t, reduced.Names(), "tokens")
	require.Len(t, fingerprint.Default.With(extra), n+1)
}

func TestSetPerHost(t *testing.T) {
	buildID := fingerprint.MustRegexp("build-id", `Build [0-9a-f]{7}`, "")
	set := fingerprint.Set{PerHost: map[string]fingerprint.Rules{
		"Docs.Example.com:443": {buildID},
		"bücher.example":       {buildID},
	}}
	page := "# Docs\nBuild 3f9a2c1 · Generated at 10:00\n"
	stripped := "# Docs\n· Generated at"

	for _, host := range []string{"docs.example.com", "DOCS.EXAMPLE.COM", "docs.example.com:8080", "docs.example.com.",
		"https://user@docs.example.com/guide?x=1", "[docs.example.com]", "xn--bcher-kva.example", "Bücher.example"} {
		require.Equal(t, stripped, set.For(host).Strip(page), "host %q", host)
	}
	for _, host := range []string{"example.com", "api.docs.example.com", "docs.example.org", "", "bucher.example"} {
		require.Equal(t, "# Docs\nBuild 3f9a2c1 · Generated at", set.For(host).Strip(page), "host %q", host)
	}
	// Base rules come first; an empty Base means no rules besides the host's.
	bare := fingerprint.Set{Base: fingerprint.Rules{}, PerHost: set.PerHost}
	require.Equal(t, []string{"build-id"}, bare.For("docs.example.com").Names())
	require.Empty(t, bare.For("other.example").Names())
	require.Equal(t, append(fingerprint.Default.Names(), "build-id"), set.For("docs.example.com").Names())
	// The zero Set is Default everywhere.
	require.Equal(t, fingerprint.Default.Names(), fingerprint.Set{}.For("any.example").Names())
}

func TestSetKeysThatNormalizeAlike(t *testing.T) {
	a := fingerprint.MustRegexp("a", `A`, "")
	b := fingerprint.MustRegexp("b", `B`, "")
	set := fingerprint.Set{Base: fingerprint.Rules{}, PerHost: map[string]fingerprint.Rules{
		"x.example:80": {b}, "X.example": {a},
	}}
	// Both keys apply, in sorted key order, every time.
	for range 20 {
		require.Equal(t, []string{"a", "b"}, set.For("x.example").Names())
	}
}

func TestRegexpError(t *testing.T) {
	_, err := fingerprint.Regexp("footer-ids", `id=(\d+`, "")
	require.Error(t, err)
	require.Contains(t, err.Error(), `rule "footer-ids"`)
	var se *syntax.Error
	require.True(t, errors.As(err, &se))
	require.Panics(t, func() { fingerprint.MustRegexp("bad", `(`, "") })

	r, err := fingerprint.Regexp("ids", `id=(\d+)`, "id=#")
	require.NoError(t, err)
	require.Equal(t, "a id=# b", fingerprint.Rules{r}.Strip("a id=42 b"))
}

func TestFuncAndEmptyRules(t *testing.T) {
	upper := fingerprint.Rule{Name: "upper", Func: func(s string) string { return s + "\nappended" }}
	require.Equal(t, "x\nappended", fingerprint.Rules{upper}.Strip("x"))
	require.Equal(t, "x", fingerprint.Rules{{Name: "noop"}}.Strip("x"))
}

func TestCustomSection(t *testing.T) {
	rs := fingerprint.Rules{fingerprint.Section("more-from", "More from the blog", "Trending")}
	in := "# A\ntext\n## More from the blog\n* x\n## TRENDING:\n* y\n# B\nz"
	require.Equal(t, "# A\ntext\n# B\nz", rs.Strip(in))
}

func TestConcurrentUse(t *testing.T) {
	page := readFile(t, "page_run1.md")
	want := fingerprint.Of(page)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 20 {
				if got := fingerprint.Of(page); got != want {
					t.Errorf("Of = %s, want %s", got, want)
				}
			}
		})
	}
	wg.Wait()
}

// Hostile input: one long line packed with clocks, token keys and "ago"s
// (so every line filter selects it and every pattern runs on all of it),
// then a long run of related-posts headings. Strip must finish and keep
// its contract; BenchmarkOfHostile measures the worst-case speed.
func TestHostileInput(t *testing.T) {
	page := hostilePage(64 << 10)
	out := fingerprint.Strip(page)
	require.Equal(t, sha256hex(out), fingerprint.Of(page))
	require.NotContains(t, out, "Related posts")
	require.NotContains(t, out, "9:15")
}

// hostilePage returns about size bytes of hostile Markdown.
func hostilePage(size int) string {
	var b strings.Builder
	for b.Len() < size {
		b.WriteString("1:1 x_token= \u00a0: 3 hours ago Updated 9:15 ")
	}
	b.WriteString("\n")
	for range 20000 {
		b.WriteString("## Related posts\n# a\n")
	}
	return b.String()
}
