package discover_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/discover"
)

// FuzzDetect serves arbitrary bodies at URLs that promise each format and
// checks that Detect never panics and always answers with one of the three
// formats or a typed error.
func FuzzDetect(f *testing.F) {
	seeds := []string{
		`<?xml version="1.0"?><urlset><url><loc>https://x.example/a</loc></url></urlset>`,
		`<sitemapindex><sitemap><loc>https://x.example/s.xml</loc></sitemap></sitemapindex>`,
		rss,
		"https://x.example/a\nhttps://x.example/b\n",
		"# Docs\n\n> Summary\n\n## Pages\n\n- [A](/a): first\n",
		"<!doctype html><html><body><a href='/docs/a'>a</a></body></html>",
		"<p>fragment",
		"<?xml version='1.0'?><note/>",
		`{"a": 1}`,
		string(pdfBody),
		string(pngBody),
		string(gzipped([]byte("<urlset><url><loc>https://x.example/a</loc></url></urlset>"))),
		"\xff\xfe<\x00u\x00r\x00l\x00s\x00e\x00t\x00>\x00",
		"",
		"# Title only",
	}
	for i, s := range seeds {
		f.Add([]byte(s), uint8(i), "text/plain")
	}

	var (
		bodies sync.Map
		next   atomic.Int64
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v, ok := bodies.Load(r.URL.Query().Get("id"))
		if !ok {
			http.NotFound(w, r)
			return
		}
		d := v.(served)
		w.Header().Set("Content-Type", d.ctype)
		w.Write(d.body)
	}))
	defer srv.Close()
	names := []string{"/entry", "/sitemap.xml", "/llms.txt", "/docs/page", "/sitemap-1.xml.gz", "/docs/llms-full.txt"}

	f.Fuzz(func(t *testing.T, body []byte, name uint8, ctype string) {
		ctype = strings.Map(func(r rune) rune {
			if r < ' ' || r > '~' {
				return -1 // a header value the test server could not send
			}
			return r
		}, ctype)
		id := fmt.Sprint(next.Add(1))
		bodies.Store(id, served{body: body, ctype: ctype})
		defer bodies.Delete(id)
		u := srv.URL + names[int(name)%len(names)] + "?id=" + id

		d, err := discover.Detect(context.Background(), srv.Client(), u)
		var fe *discover.FormatError
		switch {
		case err == nil:
			require.Contains(t, []discover.Format{discover.FormatSitemap, discover.FormatLLMsTxt, discover.FormatPage}, d.Format)
		case errors.As(err, &fe):
			require.Empty(t, d.Format)
			require.Contains(t, err.Error(), "set EntryFormat to sitemap, llms.txt or page")
			require.NotEmpty(t, fe.Reason)
		default:
			// The format was found, but counting its links failed (a
			// truncated sitemap, say): the error comes from its parser.
			require.NotEmpty(t, d.Format, "%v", err)
		}
	})
}

type served struct {
	body  []byte
	ctype string
}
