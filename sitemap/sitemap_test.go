package sitemap_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/sitemap"
)

// result is everything one Parse call reported.
type result struct {
	kind    sitemap.Kind
	entries []sitemap.Entry
	skipped []*sitemap.SkipError
	err     error
}

func (r result) locs() []string {
	out := []string{}
	for _, e := range r.entries {
		out = append(out, e.Loc)
	}
	return out
}

func parseWith(p sitemap.Parser, doc []byte) result {
	var r result
	p.OnSkip = func(e *sitemap.SkipError) { r.skipped = append(r.skipped, e) }
	r.kind, r.err = p.Parse(bytes.NewReader(doc), func(e sitemap.Entry) error {
		r.entries = append(r.entries, e)
		return nil
	})
	return r
}

func parse(doc string) result { return parseWith(sitemap.Parser{}, []byte(doc)) }

func gz(t testing.TB, data []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write(data)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return buf.Bytes()
}

func urlset(body string) string {
	return `<?xml version="1.0" encoding="UTF-8"?>` + "\n" +
		`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + body + `</urlset>`
}

func TestKindString(t *testing.T) {
	for kind, want := range map[sitemap.Kind]string{
		sitemap.Unknown:  "unknown",
		sitemap.URLSet:   "urlset",
		sitemap.Index:    "sitemapindex",
		sitemap.Text:     "text",
		sitemap.RSS:      "rss",
		sitemap.Atom:     "atom",
		sitemap.Kind(99): "unknown",
	} {
		require.Equal(t, want, kind.String())
	}
}

func TestDetectsKindFromContent(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		kind sitemap.Kind
		locs []string
	}{
		{"urlset", urlset(`<url><loc>http://a.example/</loc></url>`), sitemap.URLSet, []string{"http://a.example/"}},
		{"index", `<sitemapindex><sitemap><loc>http://a.example/s1.xml</loc></sitemap></sitemapindex>`, sitemap.Index, []string{"http://a.example/s1.xml"}},
		{"text", "http://a.example/1\nhttp://a.example/2\n", sitemap.Text, []string{"http://a.example/1", "http://a.example/2"}},
		{"text after blank lines", "\n\n   \r\nhttp://a.example/1", sitemap.Text, []string{"http://a.example/1"}},
		{"xml after blank lines", "\n\n  " + urlset(`<url><loc>http://a.example/</loc></url>`), sitemap.URLSet, []string{"http://a.example/"}},
		{"comment and doctype before root", `<!-- generated --><!DOCTYPE urlset><?xml-stylesheet href="s.xsl"?><urlset><url><loc>http://a.example/</loc></url></urlset>`, sitemap.URLSet, []string{"http://a.example/"}},
		{"empty urlset", urlset(``), sitemap.URLSet, []string{}},
		{"rss", `<rss version="2.0"><channel><link>http://a.example/</link><item><link>http://a.example/i</link></item></channel></rss>`, sitemap.RSS, []string{"http://a.example/i"}},
		{"atom", `<feed xmlns="http://www.w3.org/2005/Atom"><link href="http://a.example/"/><entry><link href="http://a.example/e"/></entry></feed>`, sitemap.Atom, []string{"http://a.example/e"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := parse(tc.doc)
			require.NoError(t, r.err)
			require.Equal(t, tc.kind, r.kind)
			require.Equal(t, tc.locs, r.locs())
		})
	}
}

func TestIndexEntries(t *testing.T) {
	r := parse(`<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
		<sitemap><loc>http://a.example/s1.xml.gz</loc><lastmod>2004-10-01T18:23:17+00:00</lastmod></sitemap>
		<sitemap><loc>http://a.example/s2.xml.gz</loc></sitemap>
	</sitemapindex>`)
	require.NoError(t, r.err)
	require.Equal(t, sitemap.Index, r.kind)
	require.Equal(t, []sitemap.Entry{
		{Kind: sitemap.Index, Loc: "http://a.example/s1.xml.gz", LastMod: time.Date(2004, 10, 1, 18, 23, 17, 0, time.UTC)},
		{Kind: sitemap.Index, Loc: "http://a.example/s2.xml.gz"},
	}, r.entries)
}

func TestEntryFields(t *testing.T) {
	r := parse(urlset(`
		<url><loc>http://a.example/1</loc><lastmod>2005-01-01</lastmod><changefreq>monthly</changefreq><priority>0.8</priority></url>
		<url><loc>http://a.example/2</loc><changefreq> WEEKLY </changefreq><priority>0.0</priority></url>
		<url><loc>http://a.example/3</loc><changefreq>when we feel like it</changefreq><priority>1.1</priority></url>
		<url><loc>http://a.example/4</loc><priority>-0.1</priority></url>
		<url><loc>http://a.example/5</loc><priority>NaN</priority></url>
		<url><loc>http://a.example/6</loc><priority>1</priority><changefreq>never</changefreq></url>
	`))
	require.NoError(t, r.err)
	require.Equal(t, []sitemap.Entry{
		{Kind: sitemap.URLSet, Loc: "http://a.example/1", LastMod: time.Date(2005, 1, 1, 0, 0, 0, 0, time.UTC), ChangeFreq: sitemap.Monthly, Priority: 0.8, HasPriority: true},
		{Kind: sitemap.URLSet, Loc: "http://a.example/2", ChangeFreq: sitemap.Weekly, Priority: 0, HasPriority: true},
		{Kind: sitemap.URLSet, Loc: "http://a.example/3"},
		{Kind: sitemap.URLSet, Loc: "http://a.example/4"},
		{Kind: sitemap.URLSet, Loc: "http://a.example/5"},
		{Kind: sitemap.URLSet, Loc: "http://a.example/6", ChangeFreq: sitemap.Never, Priority: 1, HasPriority: true},
	}, r.entries)
}

func TestLocTextHandling(t *testing.T) {
	tests := []struct {
		name string
		body string
		want string
	}{
		{"surrounding whitespace", "<loc>\n\t  http://a.example/x  \r\n</loc>", "http://a.example/x"},
		{"entities", "<loc>http://a.example/?a=1&amp;b=&apos;2&apos;&amp;c=&lt;3&gt;&amp;d=&quot;4&quot;</loc>", `http://a.example/?a=1&b='2'&c=<3>&d="4"`},
		{"numeric entities", "<loc>http://a.example/&#252;&#x00FC;</loc>", "http://a.example/üü"},
		{"cdata", "<loc><![CDATA[ http://a.example/?a=1&b=2 ]]></loc>", "http://a.example/?a=1&b=2"},
		{"cdata mixed with text", "<loc>http://a.example/<![CDATA[a&b]]>/c</loc>", "http://a.example/a&b/c"},
		{"bare ampersand kept", "<loc>http://a.example/?a=1&b=2</loc>", "http://a.example/?a=1&b=2"},
		{"comment inside loc", "<loc>http://a.example/<!-- x -->y</loc>", "http://a.example/y"},
		{"first loc wins", "<loc>http://a.example/1</loc><loc>http://a.example/2</loc>", "http://a.example/1"},
		{"uppercase element names", "<LOC>http://a.example/upper</LOC>", "http://a.example/upper"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := parse(urlset("<url>" + tc.body + "</url>"))
			require.NoError(t, r.err)
			require.Equal(t, []string{tc.want}, r.locs())
		})
	}
}

func TestNamespacesAndExtensions(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"no namespace", `<urlset><url><loc>http://a.example/</loc></url></urlset>`, []string{"http://a.example/"}},
		{"old google namespace", `<urlset xmlns="http://www.google.com/schemas/sitemap/0.84"><url><loc>http://a.example/</loc></url></urlset>`, []string{"http://a.example/"}},
		{"prefixed sitemap namespace", `<s:urlset xmlns:s="http://www.sitemaps.org/schemas/sitemap/0.9"><s:url><s:loc>http://a.example/</s:loc></s:url></s:urlset>`, []string{"http://a.example/"}},
		{"image extension loc ignored", urlset(`<url><loc>http://a.example/p</loc><image:image xmlns:image="http://www.google.com/schemas/sitemap-image/1.1"><image:loc>http://a.example/i.jpg</image:loc></image:image></url>`), []string{"http://a.example/p"}},
		{"extension loc as direct child ignored", urlset(`<url xmlns:video="http://www.google.com/schemas/sitemap-video/1.1"><video:loc>http://a.example/v.mp4</video:loc><loc>http://a.example/p</loc></url>`), []string{"http://a.example/p"}},
		{"undeclared prefix ignored", urlset(`<url><image:loc>http://a.example/i.jpg</image:loc><loc>http://a.example/p</loc></url>`), []string{"http://a.example/p"}},
		{"hreflang links ignored", urlset(`<url xmlns:xhtml="http://www.w3.org/1999/xhtml"><loc>http://a.example/en</loc><xhtml:link rel="alternate" hreflang="fr" href="http://a.example/fr"/></url>`), []string{"http://a.example/en"}},
		{"news extension ignored", urlset(`<url xmlns:news="http://www.google.com/schemas/sitemap-news/0.9"><loc>http://a.example/n</loc><news:news><news:publication><news:name>N</news:name></news:publication><news:title>T &amp; t</news:title></news:news></url>`), []string{"http://a.example/n"}},
		{"unknown children ignored", urlset(`<url><random_tag a="b">x<b>y</b></random_tag><loc>http://a.example/r</loc><empty/></url>`), []string{"http://a.example/r"}},
		{"url nested in another element ignored", urlset(`<group><url><loc>http://a.example/deep</loc></url></group><url><loc>http://a.example/top</loc></url>`), []string{"http://a.example/top"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := parse(tc.doc)
			require.NoError(t, r.err)
			require.Equal(t, tc.want, r.locs())
		})
	}
}

// lastmodCases covers every W3C-datetime form and the tolerated deviations.
var lastmodCases = []struct {
	in   string
	want time.Time // zero: not recognized
}{
	{"1997", time.Date(1997, 1, 1, 0, 0, 0, 0, time.UTC)},
	{"1997-07", time.Date(1997, 7, 1, 0, 0, 0, 0, time.UTC)},
	{"1997-07-16", time.Date(1997, 7, 16, 0, 0, 0, 0, time.UTC)},
	{"1997-07-16T19:20+01:00", time.Date(1997, 7, 16, 18, 20, 0, 0, time.UTC)},
	{"1997-07-16T19:20:30+01:00", time.Date(1997, 7, 16, 18, 20, 30, 0, time.UTC)},
	{"1997-07-16T19:20:30.45+01:00", time.Date(1997, 7, 16, 18, 20, 30, 450_000_000, time.UTC)},
	{"1997-07-16T19:20:30.123456789123Z", time.Date(1997, 7, 16, 19, 20, 30, 123_456_789, time.UTC)},
	{"1994-11-05T08:15:30-05:00", time.Date(1994, 11, 5, 13, 15, 30, 0, time.UTC)},
	{"1994-11-05T13:15:30Z", time.Date(1994, 11, 5, 13, 15, 30, 0, time.UTC)},
	{"2004-12-23T18:00:15+00:00", time.Date(2004, 12, 23, 18, 0, 15, 0, time.UTC)},
	{"2024-02-29T23:30:00-01:30", time.Date(2024, 3, 1, 1, 0, 0, 0, time.UTC)},
	// deviations seen in the wild
	{"2009-12-17 12:04:56", time.Date(2009, 12, 17, 12, 4, 56, 0, time.UTC)},
	{"2009-12-17 12:04:56+02:00", time.Date(2009, 12, 17, 10, 4, 56, 0, time.UTC)},
	{"2009-12-17T12:04:56", time.Date(2009, 12, 17, 12, 4, 56, 0, time.UTC)},
	{"2009-12-17T12:04", time.Date(2009, 12, 17, 12, 4, 0, 0, time.UTC)},
	{"2009-12-17t12:04:56z", time.Date(2009, 12, 17, 12, 4, 56, 0, time.UTC)},
	{"2009-12-17T12:04:56+0200", time.Date(2009, 12, 17, 10, 4, 56, 0, time.UTC)},
	{"2009-12-17T12:04:56+02", time.Date(2009, 12, 17, 10, 4, 56, 0, time.UTC)},
	{"2009-12-17T12:04:56 +02:00", time.Date(2009, 12, 17, 10, 4, 56, 0, time.UTC)},
	{"2009-12-17T12:04:56.000000", time.Date(2009, 12, 17, 12, 4, 56, 0, time.UTC)},
	{"2009-12-17 12:04:56 UTC", time.Date(2009, 12, 17, 12, 4, 56, 0, time.UTC)},
	{"  2005-01-01  ", time.Date(2005, 1, 1, 0, 0, 0, 0, time.UTC)},
	{"Thu, 17 Dec 2009 12:04:56 +0200", time.Date(2009, 12, 17, 10, 4, 56, 0, time.UTC)},
	{"Thu, 17 Dec 2009 12:04:56 GMT", time.Date(2009, 12, 17, 12, 4, 56, 0, time.UTC)},
	{"Mon, 5 Feb 2024 08:00 EST", time.Date(2024, 2, 5, 13, 0, 0, 0, time.UTC)},
	{"17 December 09 12:04:56", time.Date(2009, 12, 17, 12, 4, 56, 0, time.UTC)},
	// not recognized
	{"", time.Time{}},
	{"not a date", time.Time{}},
	{"2021-06-18T112:13:04+00:00", time.Time{}},
	{"0000-00-00", time.Time{}},
	{"2023-02-29", time.Time{}},
	{"2023-13-01", time.Time{}},
	{"2023-1-01", time.Time{}},
	{"2023-01-01T24:00:00Z", time.Time{}},
	{"2023-01-01T12:60Z", time.Time{}},
	{"2023-01-01T12:00:00.Z", time.Time{}},
	{"2023-01-01T12:00:00+25:00", time.Time{}},
	{"2023-01-01T12:00:00 PST8PDT", time.Time{}},
	{"2023-01T12:00Z", time.Time{}},
	{"1700000000", time.Time{}},
	{"Thu, 17 Dec 2009 12:04:56 XYZ", time.Time{}},
	{"Thu, 31 Feb 2009 12:04:56 GMT", time.Time{}},
}

func TestLastMod(t *testing.T) {
	for _, tc := range lastmodCases {
		t.Run(tc.in, func(t *testing.T) {
			r := parse(urlset(`<url><loc>http://a.example/</loc><lastmod>` + tc.in + `</lastmod></url>`))
			require.NoError(t, r.err)
			require.Len(t, r.entries, 1)
			got := r.entries[0].LastMod
			require.True(t, tc.want.Equal(got), "want %v, got %v", tc.want, got)
			if !got.IsZero() {
				require.Equal(t, time.UTC, got.Location())
			}
		})
	}
}

func TestFeeds(t *testing.T) {
	tests := []struct {
		name string
		doc  string
		kind sitemap.Kind
		want []sitemap.Entry
	}{
		{
			"rss link and pubDate, channel link ignored", `<rss version="2.0"><channel><link>http://a.example/</link>
				<item><link> http://a.example/1 </link><guid>http://a.example/guid1</guid><pubDate>Thu, 17 Dec 2009 12:04:56 +0200</pubDate></item>
				<item><guid isPermaLink="true">http://a.example/2</guid></item>
				<item><guid isPermaLink="false">http://a.example/3</guid></item>
				<item><guid>tag:a.example,2024:4</guid></item>
			</channel></rss>`, sitemap.RSS,
			[]sitemap.Entry{
				{Loc: "http://a.example/1", LastMod: time.Date(2009, 12, 17, 10, 4, 56, 0, time.UTC)},
				{Loc: "http://a.example/2"},
			},
		},
		{
			"rss 1.0 rdf with dc:date", `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/" xmlns:dc="http://purl.org/dc/elements/1.1/">
				<channel><link>http://a.example/</link></channel>
				<item><link>http://a.example/1</link><dc:date>2024-01-02</dc:date></item>
			</rdf:RDF>`, sitemap.RSS,
			[]sitemap.Entry{{Loc: "http://a.example/1", LastMod: time.Date(2024, 1, 2, 0, 0, 0, 0, time.UTC)}},
		},
		{
			"atom link selection and dates", `<feed xmlns="http://www.w3.org/2005/Atom"><link href="http://a.example/"/>
				<entry><link rel="edit" href="http://a.example/1?edit"/><link href="http://a.example/1"/><link rel="alternate" href="http://a.example/1?alt"/><published>2020-01-01T00:00:00Z</published><updated>2021-01-01T00:00:00Z</updated></entry>
				<entry><link rel="alternate" href="http://a.example/2"/><published>2020-01-01T00:00:00Z</published></entry>
				<entry><id>http://a.example/3</id></entry>
				<entry><id>urn:uuid:1225c695-cfb8-4ebb-aaaa-80da344efa6a</id></entry>
			</feed>`, sitemap.Atom,
			[]sitemap.Entry{
				{Loc: "http://a.example/1", LastMod: time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)},
				{Loc: "http://a.example/2", LastMod: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)},
				{Loc: "http://a.example/3"},
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := parse(tc.doc)
			require.NoError(t, r.err)
			require.Equal(t, tc.kind, r.kind)
			for i := range tc.want {
				tc.want[i].Kind = tc.kind // every entry names its document's kind
			}
			require.Equal(t, tc.want, r.entries)
		})
	}
}

func TestTextSitemap(t *testing.T) {
	doc := "\ufeff# a comment line\r\n" +
		"http://a.example/1\r\n" +
		"\r\n" +
		"   https://a.example/2   \r\n" +
		"\t\n" +
		"not a url\n" +
		"ftp://a.example/3\n" +
		"//a.example/4\n" +
		"http:///nohost\n" +
		"http://a.example/has space\n" +
		"http://a.example/\x00nul\n" +
		"http://a.example/\xff\xfe\n" +
		"HTTP://A.EXAMPLE/5" // no final newline
	r := parse(doc)
	require.NoError(t, r.err)
	require.Equal(t, sitemap.Text, r.kind)
	require.Equal(t, []string{"http://a.example/1", "https://a.example/2", "HTTP://A.EXAMPLE/5"}, r.locs())
	var lines []int
	for _, s := range r.skipped {
		require.ErrorIs(t, s, sitemap.ErrNotURL)
		lines = append(lines, s.Line)
	}
	require.Equal(t, []int{6, 7, 8, 9, 10, 11, 12}, lines, "comments and blank lines are not reported")
}

func TestLineNumbersCountLeadingBlankLines(t *testing.T) {
	r := parse("\ufeff\n\n\nhttp://a.example/1\njunk\n")
	require.NoError(t, r.err)
	require.Len(t, r.skipped, 1)
	require.Equal(t, 5, r.skipped[0].Line)

	r = parse("\n\n<urlset>\n<url><loc></loc></url>\n<url><loc>http://a.exa")
	require.Len(t, r.skipped, 1)
	require.Equal(t, 4, r.skipped[0].Line)
	var se *sitemap.SyntaxError
	require.ErrorAs(t, r.err, &se)
	require.Equal(t, 5, se.Line)
}

func TestTextWithoutURLsIsNotASitemap(t *testing.T) {
	for _, doc := range []string{
		`{"error": "not found"}`,
		"Just some prose.\nMore prose.\n",
		"\x89PNG\r\n\x1a\n\x00\x00binary",
	} {
		r := parse(doc)
		var fe *sitemap.FormatError
		require.ErrorAs(t, r.err, &fe)
		require.Equal(t, "text", fe.Format)
		require.ErrorIs(t, r.err, sitemap.ErrNotSitemap)
		require.Equal(t, sitemap.Unknown, r.kind)
		require.Empty(t, r.entries)
	}
	// Comments only is an empty text sitemap, not an error.
	r := parse("# nothing yet\n")
	require.NoError(t, r.err)
	require.Equal(t, sitemap.Text, r.kind)
	require.Empty(t, r.entries)
}

func TestByteOrderMarksAndEncodings(t *testing.T) {
	want := []string{"http://a.example/ü"}
	doc := urlset(`<url><loc>http://a.example/ü</loc></url>`)
	utf16doc := func(order binary.ByteOrder, bom bool, s string) []byte {
		u := utf16.Encode([]rune(s))
		if bom {
			u = append([]uint16{0xfeff}, u...)
		}
		out := make([]byte, 2*len(u))
		for i, c := range u {
			order.PutUint16(out[2*i:], c)
		}
		return out
	}
	decl16 := strings.Replace(doc, "UTF-8", "UTF-16", 1)
	tests := []struct {
		name string
		doc  []byte
	}{
		{"utf-8 bom", append([]byte("\ufeff"), doc...)},
		{"utf-8 bom then blank", append([]byte("\ufeff\r\n  "), doc...)},
		{"utf-16le bom", utf16doc(binary.LittleEndian, true, decl16)},
		{"utf-16be bom", utf16doc(binary.BigEndian, true, decl16)},
		{"utf-16 declared but utf-8 bytes", []byte(decl16)},
		{"iso-8859-1", []byte(strings.Replace(strings.Replace(doc, "UTF-8", "ISO-8859-1", 1), "ü", "\xfc", 1))},
		{"windows-1252", []byte(strings.Replace(strings.Replace(doc, "UTF-8", "windows-1252", 1), "ü", "\xfc", 1))},
		{"gzip then bom", gz(t, append([]byte("\ufeff"), doc...))},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := parseWith(sitemap.Parser{}, tc.doc)
			require.NoError(t, r.err)
			require.Equal(t, sitemap.URLSet, r.kind)
			require.Equal(t, want, r.locs())
		})
	}

	t.Run("unsupported encoding", func(t *testing.T) {
		r := parse(strings.Replace(doc, "UTF-8", "x-no-such-charset", 1))
		require.ErrorIs(t, r.err, sitemap.ErrNotSitemap)
		require.ErrorContains(t, r.err, "x-no-such-charset")
	})
}

func TestGzipDetectedByMagicBytes(t *testing.T) {
	xml := []byte(urlset(`<url><loc>http://a.example/z</loc></url>`))
	txt := []byte("http://a.example/t\n")
	tests := []struct {
		name string
		doc  []byte
		kind sitemap.Kind
		want []string
	}{
		{"gzip xml", gz(t, xml), sitemap.URLSet, []string{"http://a.example/z"}},
		{"gzip text", gz(t, txt), sitemap.Text, []string{"http://a.example/t"}},
		{"plain xml", xml, sitemap.URLSet, []string{"http://a.example/z"}},
		{"gzip in gzip", gz(t, gz(t, xml)), sitemap.URLSet, []string{"http://a.example/z"}},
		{"two gzip members", append(gz(t, txt), gz(t, []byte("http://a.example/u\n"))...), sitemap.Text, []string{"http://a.example/t", "http://a.example/u"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := parseWith(sitemap.Parser{}, tc.doc)
			require.NoError(t, r.err)
			require.Equal(t, tc.kind, r.kind)
			require.Equal(t, tc.want, r.locs())
		})
	}

	t.Run("three layers is a format error", func(t *testing.T) {
		r := parseWith(sitemap.Parser{}, gz(t, gz(t, gz(t, xml))))
		var fe *sitemap.FormatError
		require.ErrorAs(t, r.err, &fe)
		require.Equal(t, "gzip", fe.Format)
	})
	t.Run("corrupt gzip", func(t *testing.T) {
		bad := gz(t, xml)
		bad[len(bad)-6] ^= 0xff // the CRC-32
		r := parseWith(sitemap.Parser{}, bad)
		require.Equal(t, []string{"http://a.example/z"}, r.locs())
		// The XML ended before the checksum was read, so this is clean.
		require.NoError(t, r.err)

		r = parseWith(sitemap.Parser{}, gz(t, txt)[:15])
		require.ErrorIs(t, r.err, sitemap.ErrMalformed)
		require.ErrorContains(t, r.err, "gzip")
	})
	t.Run("corrupt gzip header", func(t *testing.T) {
		r := parseWith(sitemap.Parser{}, []byte{0x1f, 0x8b, 0xff, 0xff})
		require.ErrorIs(t, r.err, sitemap.ErrMalformed)
	})
}

func TestNotASitemap(t *testing.T) {
	tests := []struct {
		name   string
		doc    string
		format string
		root   string
	}{
		{"html5 page", "<!DOCTYPE html>\n<html><head><title>404</title></head><body>Not found</body></html>", "HTML", ""},
		{"html without doctype", "<HTML><BODY>hi</BODY></HTML>", "HTML", ""},
		{"xhtml with declaration", `<?xml version="1.0"?><html xmlns="http://www.w3.org/1999/xhtml"><body/></html>`, "HTML", "html"},
		{"html fragment", "<h1>404 Not Found!</h1>", "HTML", "h1"},
		{"other xml", `<?xml version="1.0"?><Error><Code>AccessDenied</Code></Error>`, "XML", "Error"},
		{"no root element", `<?xml version="1.0"?><!-- nothing -->`, "XML", ""},
		{"garbage markup", "<<<>>>", "XML", ""},
		{"empty", "", "empty", ""},
		{"blank", " \r\n\t ", "empty", ""},
		{"bom only", "\ufeff", "empty", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := parse(tc.doc)
			var fe *sitemap.FormatError
			require.ErrorAs(t, r.err, &fe)
			require.ErrorIs(t, r.err, sitemap.ErrNotSitemap)
			require.Equal(t, tc.format, fe.Format)
			require.Equal(t, tc.root, fe.Root)
			require.Equal(t, sitemap.Unknown, r.kind)
			require.Empty(t, r.entries)
		})
	}
}

func TestTruncatedAndMalformed(t *testing.T) {
	full := urlset(`<url><loc>http://a.example/1</loc></url><url><loc>http://a.example/2</loc></url><url><loc>http://a.example/3</loc></url>`)
	cut := strings.Index(full, "http://a.example/3") + 5
	tests := []struct {
		name string
		doc  string
		want []string
	}{
		{"cut inside the third loc", full[:cut], []string{"http://a.example/1", "http://a.example/2"}},
		{"missing </urlset>", strings.TrimSuffix(full, "</urlset>"), []string{"http://a.example/1", "http://a.example/2", "http://a.example/3"}},
		{"cut inside a tag", full[:strings.LastIndex(full, "</url>")+3], []string{"http://a.example/1", "http://a.example/2"}},
		{"garbage in the middle", urlset(`<url><loc>http://a.example/1</loc></url><url><loc>x</loc></url <<>`), []string{"http://a.example/1"}},
		{"unterminated cdata", urlset(`<url><loc>http://a.example/1</loc></url><url><loc><![CDATA[http://a.`), []string{"http://a.example/1"}},
		{"unterminated comment", urlset(`<url><loc>http://a.example/1</loc></url><!-- `), []string{"http://a.example/1"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := parse(tc.doc)
			require.Equal(t, sitemap.URLSet, r.kind)
			require.Equal(t, tc.want, r.locs())
			var se *sitemap.SyntaxError
			require.ErrorAs(t, r.err, &se)
			require.ErrorIs(t, r.err, sitemap.ErrMalformed)
			require.Positive(t, se.Line)
			require.Positive(t, se.Offset)
			require.LessOrEqual(t, se.Offset, int64(len(tc.doc)))
		})
	}
}

func TestTrailingBytesAfterRootAreNotRead(t *testing.T) {
	doc := urlset(`<url><loc>http://a.example/1</loc></url>`) + "\n<!-- cache: 3ms --> garbage <<< \x00"
	r := parse(doc)
	require.NoError(t, r.err)
	require.Equal(t, []string{"http://a.example/1"}, r.locs())
}

func TestMismatchedTagsAreTolerated(t *testing.T) {
	// Non-strict decoding closes <b> when </url> arrives; the entry is kept.
	r := parse(urlset(`<url><loc>http://a.example/1</loc><b></url><url><loc>http://a.example/2</loc></url>`))
	require.Equal(t, []string{"http://a.example/1", "http://a.example/2"}, r.locs())
	require.NoError(t, r.err)
}

func TestEmptyLocIsSkippedAndReported(t *testing.T) {
	r := parse(urlset("\n<url><loc></loc></url>\n<url><lastmod>2024-01-01</lastmod></url>\n<url><loc> \n </loc></url>\n<url><loc>http://a.example/kept</loc></url>"))
	require.NoError(t, r.err)
	require.Equal(t, []string{"http://a.example/kept"}, r.locs())
	require.Len(t, r.skipped, 3)
	for i, s := range r.skipped {
		require.ErrorIs(t, s, sitemap.ErrEmptyLoc)
		require.Empty(t, s.Loc)
		require.Equal(t, []int{3, 4, 6}[i], s.Line)
	}
}

func TestLocLengthCap(t *testing.T) {
	long := "http://a.example/" + strings.Repeat("x", sitemap.DefaultMaxLocBytes)
	atCap := "http://a.example/" + strings.Repeat("y", sitemap.DefaultMaxLocBytes-len("http://a.example/"))
	t.Run("xml", func(t *testing.T) {
		r := parse(urlset(`<url><loc>` + long + `</loc></url><url><loc>  ` + atCap + strings.Repeat(" ", 100) + `</loc></url><url><loc>http://a.example/after</loc></url>`))
		require.NoError(t, r.err)
		require.Equal(t, []string{atCap, "http://a.example/after"}, r.locs())
		require.Len(t, r.skipped, 1)
		require.ErrorIs(t, r.skipped[0], sitemap.ErrLocTooLong)
		require.True(t, strings.HasPrefix(r.skipped[0].Loc, "http://a.example/xxx"))
		require.LessOrEqual(t, len(r.skipped[0].Loc), 210, "the reported value is cut short")
	})
	t.Run("text", func(t *testing.T) {
		// Longer than the reader's 32 KiB buffer as well.
		huge := "http://a.example/" + strings.Repeat("z", 100_000)
		r := parse(long + "\n" + atCap + "\n" + huge + "\nhttp://a.example/after\n")
		require.NoError(t, r.err)
		require.Equal(t, []string{atCap, "http://a.example/after"}, r.locs())
		require.Len(t, r.skipped, 2)
		require.ErrorIs(t, r.skipped[0], sitemap.ErrLocTooLong)
		require.ErrorIs(t, r.skipped[1], sitemap.ErrLocTooLong)
		require.Equal(t, 3, r.skipped[1].Line)
	})
	t.Run("configured", func(t *testing.T) {
		p := sitemap.Parser{MaxLocBytes: 20}
		r := parseWith(p, []byte(urlset(`<url><loc>http://a.example/12345</loc></url><url><loc>http://a.example/123</loc></url>`)))
		require.NoError(t, r.err)
		require.Equal(t, []string{"http://a.example/123"}, r.locs())
		require.ErrorIs(t, r.skipped[0], sitemap.ErrLocTooLong)
	})
	t.Run("atom href", func(t *testing.T) {
		r := parse(`<feed><entry><link href="` + long + `"/></entry><entry><link href="http://a.example/ok"/></entry></feed>`)
		require.NoError(t, r.err)
		require.Equal(t, []string{"http://a.example/ok"}, r.locs())
		require.ErrorIs(t, r.skipped[0], sitemap.ErrLocTooLong)
	})
}

func TestSizeCap(t *testing.T) {
	doc := []byte(urlset(`<url><loc>http://a.example/1</loc></url><url><loc>http://a.example/2</loc></url>`))
	t.Run("exactly at the limit", func(t *testing.T) {
		r := parseWith(sitemap.Parser{MaxBytes: int64(len(doc))}, doc)
		require.NoError(t, r.err)
		require.Len(t, r.entries, 2)
	})
	t.Run("one byte over", func(t *testing.T) {
		r := parseWith(sitemap.Parser{MaxBytes: int64(len(doc) - 1)}, doc)
		var tl *sitemap.TooLargeError
		require.ErrorAs(t, r.err, &tl)
		require.ErrorIs(t, r.err, sitemap.ErrTooLarge)
		require.Equal(t, int64(len(doc)-1), tl.Limit)
		require.Equal(t, []string{"http://a.example/1", "http://a.example/2"}, r.locs(), "entries before the limit are yielded")
	})
	t.Run("entries before the limit", func(t *testing.T) {
		limit := strings.Index(string(doc), "http://a.example/2")
		r := parseWith(sitemap.Parser{MaxBytes: int64(limit)}, doc)
		require.ErrorIs(t, r.err, sitemap.ErrTooLarge)
		require.Equal(t, []string{"http://a.example/1"}, r.locs())
	})
	t.Run("text", func(t *testing.T) {
		txt := []byte(strings.Repeat("http://a.example/1\n", 100))
		r := parseWith(sitemap.Parser{MaxBytes: 1000}, txt)
		require.ErrorIs(t, r.err, sitemap.ErrTooLarge)
		require.Len(t, r.entries, 1000/len("http://a.example/1\n"))
	})
	t.Run("counts uncompressed bytes", func(t *testing.T) {
		z := gz(t, []byte(urlset(strings.Repeat(`<url><loc>http://a.example/1</loc></url>`, 1000))))
		require.Less(t, len(z), 1000)
		r := parseWith(sitemap.Parser{MaxBytes: 10_000}, z)
		require.ErrorIs(t, r.err, sitemap.ErrTooLarge)
		require.Less(t, len(r.entries), 10_000/40)
	})
	t.Run("compressed input over the limit", func(t *testing.T) {
		// Many empty gzip members: tiny output, large input.
		var many []byte
		empty := gz(t, nil)
		for len(many) < 50_000 {
			many = append(many, empty...)
		}
		r := parseWith(sitemap.Parser{MaxBytes: 10_000}, many)
		require.ErrorIs(t, r.err, sitemap.ErrTooLarge)
	})
	t.Run("leading blanks count", func(t *testing.T) {
		r := parseWith(sitemap.Parser{MaxBytes: 1000}, []byte(strings.Repeat(" ", 2000)+string(doc)))
		require.ErrorIs(t, r.err, sitemap.ErrTooLarge)
	})
}

// bomb returns a gzip stream of prefix, then n MiB of blanks, then suffix:
// concatenated gzip members, so it is cheap to build.
func bomb(t *testing.T, prefix string, mib int, suffix string) []byte {
	t.Helper()
	var buf bytes.Buffer
	buf.Write(gz(t, []byte(prefix)))
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	require.NoError(t, err)
	blank := bytes.Repeat([]byte(" "), 1<<20)
	var member bytes.Buffer
	zw.Reset(&member)
	_, err = zw.Write(blank)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	for range mib {
		buf.Write(member.Bytes())
	}
	buf.Write(gz(t, []byte(suffix)))
	return buf.Bytes()
}

// allocated runs f and returns the bytes it allocated.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestGzipBombs(t *testing.T) {
	t.Run("text stops at the default limit", func(t *testing.T) {
		// 64 MiB uncompressed, about 70 KiB compressed.
		z := bomb(t, "http://a.example/first\n", 64, "\nhttp://a.example/never\n")
		require.Less(t, len(z), 200_000)
		var r result
		alloc := allocated(func() { r = parseWith(sitemap.Parser{}, z) })
		var tl *sitemap.TooLargeError
		require.ErrorAs(t, r.err, &tl)
		require.Equal(t, sitemap.DefaultMaxBytes, tl.Limit)
		require.Equal(t, int64(52_428_800), tl.Limit, "the protocol's limit")
		require.Equal(t, []string{"http://a.example/first"}, r.locs())
		require.Less(t, alloc, uint64(4<<20), "the blanks were never held in memory")
	})
	t.Run("xml blank run is refused before it is buffered", func(t *testing.T) {
		z := bomb(t, `<urlset><url><loc>http://a.example/first</loc></url>`, 64, `<url><loc>http://a.example/never</loc></url></urlset>`)
		var r result
		alloc := allocated(func() { r = parseWith(sitemap.Parser{}, z) })
		require.ErrorIs(t, r.err, sitemap.ErrMalformed)
		require.ErrorContains(t, r.err, "without markup")
		require.Equal(t, []string{"http://a.example/first"}, r.locs())
		require.Less(t, alloc, uint64(16<<20))
	})
	t.Run("xml elements stop at the configured limit", func(t *testing.T) {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		_, _ = zw.Write([]byte("<urlset>"))
		for range 100_000 {
			_, _ = zw.Write([]byte("<url><loc>http://a.example/</loc></url>\n"))
		}
		require.NoError(t, zw.Close())
		r := parseWith(sitemap.Parser{MaxBytes: 1 << 20}, buf.Bytes())
		require.ErrorIs(t, r.err, sitemap.ErrTooLarge)
		require.Len(t, r.entries, (1<<20-len("<urlset>"))/len("<url><loc>http://a.example/</loc></url>\n"))
	})
}

func TestHostileXML(t *testing.T) {
	t.Run("billion laughs from the corpus", func(t *testing.T) {
		data, err := os.ReadFile("testdata/golden/usp_billion_laughs.xml")
		require.NoError(t, err)
		r := parseWith(sitemap.Parser{}, data)
		require.NoError(t, r.err)
		require.Equal(t, []string{"http://test_ultimate-sitemap-parser.com/page.html"}, r.locs())
	})
	t.Run("declared entities are not expanded", func(t *testing.T) {
		var dtd strings.Builder
		dtd.WriteString(`<!DOCTYPE urlset [<!ENTITY lol "lol">`)
		for i := 1; i <= 9; i++ {
			fmt.Fprintf(&dtd, `<!ENTITY lol%d "%s">`, i, strings.Repeat(fmt.Sprintf("&lol%d;", i-1), 10))
		}
		dtd.WriteString(`<!ENTITY xxe SYSTEM "file:///etc/passwd">]>`)
		doc := strings.Replace(dtd.String(), "&lol0;", "&lol;", -1) +
			`<urlset><url><loc>http://a.example/&lol9;</loc></url><url><loc>http://a.example/&xxe;</loc></url></urlset>`
		r := parse(doc)
		require.NoError(t, r.err)
		require.Equal(t, []string{"http://a.example/&lol9;", "http://a.example/&xxe;"}, r.locs())
	})
	t.Run("deep nesting", func(t *testing.T) {
		doc := "<urlset>" + strings.Repeat("<a>", 1_000_000)
		r := parse(doc)
		var se *sitemap.SyntaxError
		require.ErrorAs(t, r.err, &se)
		require.ErrorContains(t, r.err, "nested more than")
		require.Less(t, se.Offset, int64(1000), "stopped early")
	})
	t.Run("huge attribute list", func(t *testing.T) {
		doc := urlset(`<url ` + strings.Repeat(`a="b" `, 10_000) + `><loc>http://a.example/1</loc></url>`)
		r := parse(doc)
		require.NoError(t, r.err)
		require.Equal(t, []string{"http://a.example/1"}, r.locs())
	})
}

var errStop = errors.New("enough")

func TestYieldErrorStopsParsing(t *testing.T) {
	xml := urlset(`<url><loc>http://a.example/1</loc></url><url><loc>http://a.example/2</loc></url><url><loc>http://a.example/3</loc></url>`)
	for name, doc := range map[string]string{
		"xml":  xml,
		"text": "http://a.example/1\nhttp://a.example/2\nhttp://a.example/3\n",
	} {
		t.Run(name, func(t *testing.T) {
			calls := 0
			_, err := sitemap.Parse(strings.NewReader(doc), func(e sitemap.Entry) error {
				calls++
				if calls == 2 {
					return errStop
				}
				return nil
			})
			require.ErrorIs(t, err, errStop)
			require.ErrorContains(t, err, "after 1 entries")
			require.Equal(t, 2, calls)
		})
	}
}

// failingReader returns data, then an error.
type failingReader struct {
	data []byte
	err  error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if len(f.data) == 0 {
		return 0, f.err
	}
	n := copy(p, f.data)
	f.data = f.data[n:]
	return n, nil
}

func TestReaderErrorIsReturnedAsSuch(t *testing.T) {
	errNet := errors.New("connection reset by peer")
	full := []byte(urlset(`<url><loc>http://a.example/1</loc></url><url><loc>http://a.example/2</loc></url>`))
	half := full[:len(full)-30]
	tests := []struct {
		name string
		data []byte
	}{
		{"xml", half},
		{"gzip", gz(t, full)[:40]},
		{"text", []byte("http://a.example/1\nhttp://a.ex")},
		{"nothing read", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sitemap.Parse(&failingReader{data: tc.data, err: errNet}, func(sitemap.Entry) error { return nil })
			require.ErrorIs(t, err, errNet)
			require.NotErrorIs(t, err, sitemap.ErrMalformed)
			require.NotErrorIs(t, err, sitemap.ErrNotSitemap)
		})
	}
}

func TestNilArguments(t *testing.T) {
	_, err := sitemap.Parse(nil, func(sitemap.Entry) error { return nil })
	require.Error(t, err)
	_, err = sitemap.Parse(strings.NewReader("http://a.example/"), nil)
	require.Error(t, err)
}

func TestErrorMessages(t *testing.T) {
	require.Equal(t, "sitemap: document exceeds 100 bytes uncompressed; raise Parser.MaxBytes to accept it",
		(&sitemap.TooLargeError{Limit: 100}).Error())
	require.Equal(t, `sitemap: line 3: skipped "ftp://x": not an absolute http(s) URL`,
		(&sitemap.SkipError{Line: 3, Loc: "ftp://x", Err: sitemap.ErrNotURL}).Error())
	r := parse(strings.TrimSuffix(urlset(`<url><loc>http://a.example/1</loc></url>`+"\n<url><loc>x"), "</urlset>"))
	require.Regexp(t, `^sitemap: malformed document at line 3 \(byte \d+\): unexpected EOF$`, r.err.Error())
}
