package discover_test

import (
	"context"
	"net/http"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/llmstxt"
)

func TestLLMsTxtTestsite(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 4})
	defer site.Close()
	src := discover.LLMsTxt{URL: site.LLMsURL()}
	require.Equal(t, site.LLMsURL(), src.Name())
	require.Equal(t, site.LLMsURL(), src.EntryURL())

	links, err := run(t, src, discover.Env{Client: site.Client()})
	require.NoError(t, err)
	want := []discover.Link{}
	for _, p := range site.Paths() {
		want = append(want, discover.Link{URL: site.PageURL(p), Via: site.LLMsURL()})
	}
	require.Equal(t, want, links, "relative links resolved against the file's URL")
	require.Equal(t, []string{"/llms.txt"}, paths(site.Requests()))
}

func TestLLMsTxtRealFiles(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 1})
	defer site.Close()
	tests := []struct {
		file        string
		n           int
		first, last string // "/..." is on the test site
	}{
		{"fasthtml_llms_sample.txt", 5, "https://fastht.ml/docs/tutorials/quickstart_for_web_devs.html.md",
			"https://gist.githubusercontent.com/jph00/809e4a4808d4510be0e3dc9565e9cbd3/raw/9b717589ca44cedc8aaf00b2b8cacef922964c0f/starlette-sml.md"},
		{"realworld_ast-grep.txt", 116, "/reference/cli/new.md", "/catalog/yaml/index.md"},
		{"realworld_svelte.txt", 5, "https://svelte.dev/llms-small.txt", "https://svelte.dev/docs/cli/llms.txt"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			body, err := os.ReadFile("testdata/llmstxt/" + tc.file)
			require.NoError(t, err)
			u := site.Serve("/files/"+tc.file+"/llms.txt", "text/plain; charset=utf-8", body)
			links, err := run(t, discover.LLMsTxt{URL: u}, discover.Env{Client: site.Client()})
			require.NoError(t, err)
			require.Len(t, links, tc.n)
			abs := func(s string) string {
				if strings.HasPrefix(s, "/") {
					return site.URL() + s
				}
				return s
			}
			require.Equal(t, abs(tc.first), links[0].URL)
			require.Equal(t, abs(tc.last), links[len(links)-1].URL)
			seen := map[string]bool{}
			for _, l := range links {
				require.Empty(t, l.Skip, "off-host links are kept: %s", l.URL)
				require.Equal(t, u, l.Via)
				require.True(t, strings.HasPrefix(l.URL, "https://") || strings.HasPrefix(l.URL, site.URL()+"/"), l.URL)
				require.False(t, seen[l.URL], "duplicate %s", l.URL)
				seen[l.URL] = true
			}
		})
	}
}

func TestLLMsTxtResolvesAgainstFinalURL(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 1})
	defer site.Close()
	site.Serve("/v2/docs/llms.txt", "text/markdown", []byte("# Docs\n\n> Versioned.\n\n## Pages\n\n"+
		"- [Guide](guide.md): relative\n- [API](../api/)\n- [Root](/root)\n- [Other](https://other.example/x)\n"+
		"- [Broken](http://[::1)\n- [No host](http:///path)\n- [Mail](mailto:a@b.example)\n"))
	old := site.Add("/old/llms.txt", "moved", "")
	site.Redirect("/old/llms.txt", "/v2/docs/llms.txt")

	links, err := run(t, discover.LLMsTxt{URL: old}, discover.Env{Client: site.Client()})
	require.NoError(t, err)
	got := make([]string, len(links))
	for i, l := range links {
		got[i] = strings.TrimPrefix(l.URL, site.URL()) + " " + l.Skip
		require.Equal(t, old, l.Via, "Via is the URL as requested")
		require.Zero(t, l.Depth)
	}
	require.Equal(t, []string{
		"/v2/docs/guide.md ",
		"/v2/api/ ",
		"/root ",
		"https://other.example/x ",
		"http://[::1 invalid",
		"http:///path invalid",
	}, got, "mailto: is not a page")
}

func TestLLMsTxtConditional(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 1})
	defer site.Close()
	body, err := os.ReadFile("testdata/llmstxt/realworld_svelte.txt")
	require.NoError(t, err)
	u := site.Serve("/svelte/llms.txt", "text/plain", body)
	store := newMemStore()
	env := store.incremental(site.Client())
	src := discover.LLMsTxt{URL: u}

	links, err := run(t, src, env)
	require.NoError(t, err)
	require.Len(t, links, 5)
	info := store.docs[u]
	require.NotEmpty(t, info.ETag)
	require.Equal(t, 5, info.Entries)

	site.ResetLog()
	links, err = run(t, src, env)
	require.NoError(t, err)
	require.Empty(t, links)
	require.Equal(t, []string{u}, store.takeUnchanged())
	require.Equal(t, []string{"/svelte/llms.txt 304 conditional"}, statuses(site.Requests()))
	require.Equal(t, info.ETag, site.Requests()[0].IfNoneMatch)

	site.Serve("/svelte/llms.txt", "text/plain", append(body, "\n## More\n\n- [Extra](https://svelte.dev/extra)\n"...))
	links, err = run(t, src, env)
	require.NoError(t, err)
	require.Len(t, links, 6)
	require.Empty(t, store.takeUnchanged())
	require.Equal(t, 6, store.docs[u].Entries)
}

func TestLLMsTxtErrors(t *testing.T) {
	site := testsite.New(testsite.Options{Pages: 1})
	defer site.Close()
	env := discover.Env{Client: site.Client()}

	_, err := run(t, discover.LLMsTxt{URL: site.URL() + "/none/llms.txt"}, env)
	var fe *discover.FetchError
	require.ErrorAs(t, err, &fe)
	require.Equal(t, http.StatusNotFound, fe.Status)

	html := site.Serve("/html/llms.txt", "text/html", []byte("<!doctype html><html><body><h1>Docs</h1><a href=\"/a\">a</a></body></html>"))
	_, err = run(t, discover.LLMsTxt{URL: html}, env)
	var pe *llmstxt.FormatError
	require.ErrorAs(t, err, &pe)
	require.ErrorIs(t, err, llmstxt.ErrHTML)
	require.ErrorContains(t, err, html)

	big := site.Serve("/big/llms.txt", "text/plain", []byte("# Big\n\n"+strings.Repeat("- [x](/x)\n", 100)))
	_, err = run(t, discover.LLMsTxt{URL: big}, discover.Env{Client: site.Client(), MaxBytes: 512})
	require.ErrorIs(t, err, discover.ErrTooLarge)
	require.ErrorAs(t, err, &fe)

	_, err = run(t, discover.LLMsTxt{URL: big}, discover.Env{})
	require.ErrorIs(t, err, discover.ErrNoClient)

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err = discover.LLMsTxt{URL: big}.Discover(ctx, env, func(discover.Link) error { return nil })
	require.ErrorIs(t, err, context.Canceled)
}
