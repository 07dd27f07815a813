package discover_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/fetch/geonode"
	"github.com/recrawl/recrawl/internal/fakegeonode"
	"github.com/recrawl/recrawl/internal/testsite"
)

// staticMapper returns fixed URLs, or an error.
type staticMapper struct {
	urls []string
	err  error
	got  string
}

func (m *staticMapper) MapURLs(_ context.Context, site string) ([]string, error) {
	m.got = site
	return m.urls, m.err
}

func discoverAll(t *testing.T, src discover.Source) ([]discover.Link, error) {
	t.Helper()
	var out []discover.Link
	err := src.Discover(context.Background(), discover.Env{}, func(l discover.Link) error {
		out = append(out, l)
		return nil
	})
	return out, err
}

func TestGeonodeMapLinks(t *testing.T) {
	m := &staticMapper{urls: []string{
		"https://docs.example.com/a",
		"https://DOCS.example.com/b?x=1",
		"/relative/c",
		"https://blog.docs.example.com/d",
		"https://other.example/e",
		"http://docs.example.com:8080/f",
		"mailto:team@example.com",
		"https://docs.example.com/%zz",
	}}
	tests := []struct {
		name       string
		subdomains bool
		skipped    []int
	}{
		{"same host only", false, []int{3, 4, 5, 6}},
		{"with subdomains", true, []int{4, 5, 6}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := discover.GeonodeMap{Mapper: m, URL: "https://docs.example.com/", Subdomains: tc.subdomains}
			links, err := discoverAll(t, src)
			require.NoError(t, err)
			require.Equal(t, "https://docs.example.com/", m.got)
			require.Len(t, links, len(m.urls))
			require.Equal(t, "https://docs.example.com/relative/c", links[2].URL, "resolved against the site URL")
			require.Equal(t, "https://docs.example.com/%zz", links[7].URL, "unparseable links are left for normalization to reject")
			var skipped []int
			for i, l := range links {
				require.Zero(t, l.Depth)
				require.True(t, l.LastMod.IsZero())
				if l.Skip != "" {
					require.Equal(t, discover.SkipOffHost, l.Skip)
					skipped = append(skipped, i)
				}
			}
			require.Equal(t, tc.skipped, skipped)
		})
	}
}

func TestGeonodeMapErrors(t *testing.T) {
	_, err := discoverAll(t, discover.GeonodeMap{URL: "https://x.example/"})
	require.ErrorIs(t, err, discover.ErrNoMapper)

	_, err = discoverAll(t, discover.GeonodeMap{Mapper: &staticMapper{}, URL: "x.example"})
	var fe *discover.FetchError
	require.ErrorAs(t, err, &fe)

	cause := errors.New("map timed out")
	_, err = discoverAll(t, discover.GeonodeMap{Mapper: &staticMapper{err: cause}, URL: "https://x.example/"})
	require.ErrorIs(t, err, cause)

	stop := errors.New("stop")
	src := discover.GeonodeMap{Mapper: &staticMapper{urls: []string{"https://x.example/1", "https://x.example/2"}}, URL: "https://x.example/"}
	n := 0
	err = src.Discover(context.Background(), discover.Env{}, func(discover.Link) error { n++; return stop })
	require.ErrorIs(t, err, stop)
	require.Equal(t, 1, n)

	require.Equal(t, "geonode-map:https://x.example/", src.Name())
	src.SourceName = "docs"
	require.Equal(t, "docs", src.Name())
}

// TestGeonodeMapWithClient runs the source on the real client against the
// fake API: a page of the site links to another host, which is skipped.
func TestGeonodeMapWithClient(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 6})
	t.Cleanup(site.Close)
	site.SetContent("/docs/page-0001", `<p>See <a href="https://elsewhere.example/x">elsewhere</a> and <a href="/docs/page-0005">five</a>.</p>`)
	api := fakegeonode.New(fakegeonode.Options{})
	t.Cleanup(api.Close)
	c, err := geonode.New(api.APIKey(), geonode.WithBaseURL(api.URL()))
	require.NoError(t, err)

	links, err := discoverAll(t, discover.GeonodeMap{Mapper: c, URL: site.PageURL("/docs/page-0001")})
	require.NoError(t, err)
	var on, off []string
	for _, l := range links {
		if l.Skip == discover.SkipOffHost {
			off = append(off, l.URL)
		} else {
			on = append(on, l.URL)
		}
	}
	require.Equal(t, []string{"https://elsewhere.example/x"}, off)
	require.Subset(t, on, site.PageURLs())

	api.Fail("POST /v1/map", http.StatusPaymentRequired, 1, "")
	_, err = discoverAll(t, discover.GeonodeMap{Mapper: c, URL: site.URL()})
	require.ErrorIs(t, err, geonode.ErrPaymentRequired)
}

func ExampleGeonodeMap() {
	site := testsite.New(testsite.Options{Pages: 3})
	defer site.Close()
	api := fakegeonode.New(fakegeonode.Options{})
	defer api.Close()
	client, err := geonode.New(api.APIKey(), geonode.WithBaseURL(api.URL()))
	if err != nil {
		log.Fatal(err)
	}
	src := discover.GeonodeMap{Mapper: client, URL: site.PageURL("/docs/page-0001"), SourceName: "docs"}
	err = src.Discover(context.Background(), discover.Env{}, func(l discover.Link) error {
		fmt.Println(l.URL[len(site.URL()):], l.Skip == "")
		return nil
	})
	if err != nil {
		log.Fatal(err)
	}
	// Output:
	// /docs/page-0001 true
	// /docs/page-0002 true
	// /docs/page-0003 true
	// / true
	// /docs/ true
}
