package testsite_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/internal/testsite"
)

func TestGeneratedDocuments(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 1})
	defer s.Close()
	s.HugeSitemap("/huge.xml", 3)
	_, body := get(t, s, "/huge.xml", nil)
	require.Equal(t, 3, strings.Count(string(body), "<loc>"+s.URL()+"/docs/gen-"))
	require.True(t, strings.HasSuffix(string(body), "</urlset>\n"))

	s.HugeLLMs("/big-llms.txt", 4)
	_, body = get(t, s, "/big-llms.txt", nil)
	require.True(t, strings.HasPrefix(string(body), "# Huge Docs\n"))
	require.Equal(t, 4, strings.Count(string(body), "](/docs/gen-"))

	s.HugeLinks("/links.html", 5)
	_, body = get(t, s, "/links.html", nil)
	require.Equal(t, 5, strings.Count(string(body), `<a href="/docs/gen-`))

	s.FanOut("/fan/", 3)
	_, body = get(t, s, "/fan/2.xml", nil)
	for _, child := range []string{"/fan/7.xml", "/fan/8.xml", "/fan/9.xml"} {
		require.Contains(t, string(body), "<loc>"+s.URL()+child+"</loc>")
	}
	resp, _ := get(t, s, "/fan/x.xml", nil)
	require.Equal(t, http.StatusNotFound, resp.StatusCode)
}

func TestTrickle(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 1})
	defer s.Close()
	s.Serve("/slow.txt", "text/plain", []byte("abcdef"))
	s.Trickle("/slow.txt", 20*time.Millisecond)
	began := time.Now()
	resp, body := get(t, s, "/slow.txt", nil)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "abcdef", string(body))
	require.GreaterOrEqual(t, time.Since(began), 100*time.Millisecond, "five gaps of 20 ms between six bytes")
}

func TestGzipBomb(t *testing.T) {
	s := testsite.New(testsite.Options{Pages: 1})
	defer s.Close()
	s.GzipBomb("/bomb.xml.gz", "application/gzip", "<urlset>", 3, "</urlset>", false)
	resp, body := get(t, s, "/bomb.xml.gz", nil)
	require.Equal(t, "application/gzip", resp.Header.Get("Content-Type"))
	require.Less(t, len(body), 16<<10, "small on the wire")
	zr, err := gzip.NewReader(bytes.NewReader(body))
	require.NoError(t, err)
	inflated, err := io.ReadAll(zr)
	require.NoError(t, err)
	require.Len(t, inflated, len("<urlset>")+3<<20+len("</urlset>"))
	require.True(t, strings.HasPrefix(string(inflated), "<urlset>   "))

	// Encoded: the client's transport inflates it.
	s.GzipBomb("/bomb.html", "text/html", "<p>", 2, "</p>", true)
	resp, body = get(t, s, "/bomb.html", nil)
	require.True(t, resp.Uncompressed)
	require.Len(t, body, len("<p>")+2<<20+len("</p>"))
}
