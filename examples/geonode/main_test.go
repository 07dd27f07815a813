package main

import (
	"io"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestFakeScenario runs the offline scenario: with Geonode alone every run
// re-extracts every page; with Hybrid only the first run does, and each
// later run pays for the edited pages alone.
func TestFakeScenario(t *testing.T) {
	var out strings.Builder
	sc, err := runFake(&out, 12, 3, 2)
	require.NoError(t, err)
	require.Equal(t, []int{12, 12, 12}, sc.Plain)
	require.Equal(t, []int{12, 2, 2}, sc.Hybrid)
	require.Contains(t, out.String(), "Total billed: 36 with Geonode alone, 16 with Hybrid.")
}

func TestRealNeedsKey(t *testing.T) {
	t.Setenv("GEONODE_API_KEY", "")
	t.Setenv("GEONODE_SCRAPER_API_KEY", "")
	err := runReal(io.Discard, "https://example.com/sitemap.xml", "", t.TempDir()+"/s.sqlite", false)
	require.ErrorContains(t, err, "GEONODE_API_KEY")
}
