package normalize_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"

	"github.com/recrawl/recrawl/normalize"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// urlsIn returns the http(s) URLs written in a text file (llms.txt links and
// bare URLs), cut at white space or a closing bracket or quote.
func urlsIn(text string) []string {
	var out []string
	for {
		i := strings.Index(text, "http")
		if i < 0 {
			return out
		}
		text = text[i:]
		if !strings.HasPrefix(text, "http://") && !strings.HasPrefix(text, "https://") {
			text = text[4:]
			continue
		}
		end := strings.IndexAny(text, " \t\r\n)]>\"'`")
		if end < 0 {
			end = len(text)
		}
		out = append(out, text[:end])
		text = text[end:]
	}
}

// locsIn returns the <loc> values of a sitemap, entities and CDATA decoded.
func locsIn(t *testing.T, data []byte) []string {
	t.Helper()
	var out []string
	d := xml.NewDecoder(bytes.NewReader(data))
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			return out
		}
		require.NoError(t, err)
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "loc" {
			var loc string
			require.NoError(t, d.DecodeElement(&loc, &se))
			out = append(out, loc)
		}
	}
}

// hrefsIn returns the href of every <a> in a page, and its <base href>.
func hrefsIn(t *testing.T, page []byte) (hrefs []string, base string) {
	t.Helper()
	z := html.NewTokenizer(bytes.NewReader(page))
	for {
		switch z.Next() {
		case html.ErrorToken:
			require.ErrorIs(t, z.Err(), io.EOF)
			return hrefs, base
		case html.StartTagToken, html.SelfClosingTagToken:
			name, more := z.TagName()
			tag := string(name)
			if tag != "a" && tag != "base" {
				continue
			}
			for more {
				var k, v []byte
				k, v, more = z.TagAttr()
				if string(k) != "href" {
					continue
				}
				if tag == "a" {
					hrefs = append(hrefs, string(v))
				} else if base == "" {
					base = string(v)
				}
			}
		}
	}
}

func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test -update to create it")
	require.Equal(t, string(want), string(got), "golden file %s differs; rerun with -update and review the diff", path)
}

func readGz(t *testing.T, path string) []byte {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	zr, err := gzip.NewReader(f)
	require.NoError(t, err)
	data, err := io.ReadAll(zr)
	require.NoError(t, err)
	return data
}

func outcome(out string, err error) string {
	if err != nil {
		var ne *normalize.Error
		if errors.As(err, &ne) {
			return "ERROR " + ne.Reason.Error() + ": " + ne.Detail
		}
		return "ERROR " + err.Error()
	}
	return out
}

// TestCorpusURLs normalizes every URL of real llms.txt files and sitemaps.
func TestCorpusURLs(t *testing.T) {
	var raws []string
	for _, pattern := range []string{"testdata/llmstxt/*.txt", "testdata/sitemaps/*.xml"} {
		files, err := filepath.Glob(pattern)
		require.NoError(t, err)
		require.NotEmpty(t, files, pattern)
		for _, f := range files {
			data, err := os.ReadFile(f)
			require.NoError(t, err)
			if strings.HasSuffix(f, ".xml") {
				raws = append(raws, locsIn(t, data)...)
			} else {
				raws = append(raws, urlsIn(string(data))...)
			}
		}
	}
	var buf bytes.Buffer
	distinctRaw, distinctNorm := map[string]bool{}, map[string]bool{}
	failed := 0
	for _, raw := range raws {
		out, err := normalize.URL(raw)
		fmt.Fprintf(&buf, "%q\t%q\n", raw, outcome(out, err))
		distinctRaw[raw] = true
		if err != nil {
			failed++
			continue
		}
		distinctNorm[out] = true
		checkNormalized(t, normalize.Policy{}, raw, out)
	}
	t.Logf("%d URLs, %d distinct, %d distinct after normalizing, %d rejected", len(raws), len(distinctRaw), len(distinctNorm), failed)
	require.Greater(t, len(raws), 500)
	require.Zero(t, failed, "every URL in these files is a valid http(s) URL")
	require.Less(t, len(distinctNorm), len(distinctRaw), "fragments and trailing slashes should merge some URLs")
	golden(t, "urls.golden", buf.Bytes())
}

// TestCorpusLinks resolves every link of real pages against the page URL,
// and checks the result against net/url's resolution, normalized.
func TestCorpusLinks(t *testing.T) {
	f, err := os.Open("testdata/html/pages.tsv")
	require.NoError(t, err)
	defer f.Close()
	var buf bytes.Buffer
	total, resolved, agreed := 0, 0, 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		file, pageURL, ok := strings.Cut(sc.Text(), "\t")
		require.True(t, ok)
		hrefs, baseHref := hrefsIn(t, readGz(t, filepath.Join("testdata/html", file)))
		base := pageURL
		if baseHref != "" {
			base = baseHref
		}
		fmt.Fprintf(&buf, "# %s base %q\n", file, base)
		stdBase, err := url.Parse(base)
		require.NoError(t, err)
		for _, ref := range hrefs {
			total++
			out, err := normalize.Resolve(base, ref)
			fmt.Fprintf(&buf, "%q\t%q\n", ref, outcome(out, err))
			if err != nil {
				continue
			}
			resolved++
			checkNormalized(t, normalize.Policy{}, ref, out)
			// net/url agrees wherever it can parse the reference.
			stdRef, err := url.Parse(strings.TrimSpace(ref))
			if err != nil {
				continue
			}
			std, err := normalize.URL(stdBase.ResolveReference(stdRef).String())
			require.NoError(t, err, ref)
			require.Equal(t, std, out, "ref %q: net/url resolves differently", ref)
			agreed++
		}
	}
	require.NoError(t, sc.Err())
	t.Logf("%d links, %d resolved, %d rejected, %d checked against net/url", total, resolved, total-resolved, agreed)
	require.Greater(t, total, 500)
	require.Greater(t, resolved, total*8/10)
	golden(t, "links.golden", buf.Bytes())
}
