package extract_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/extract"
)

func TestArticleDropsFurniture(t *testing.T) {
	doc := readGolden(t, "article")
	for _, gone := range []string{
		"Skip to content", "Search the Courier", "Politics", // header, navigation, search
		"Share on", "More from News", "Western bank flood defences", // share bar, related
		"Get the Courier", "Sign up", // newsletter form
		"About us", "Registered in England", // footer
		"cookies", "Accept All Cookies", // consent banner
		"Topics:",             // article footer
		"cdn.courier.example", // image URL
	} {
		require.NotContains(t, doc.Markdown, gone)
	}
	for _, kept := range []string{
		"For most of the last decade, the question in Marrow Ford",
		"## Two floods changed the arithmetic",
		"> “We kept pricing a bridge for the river we used to have,”",
		"- Free travel for foot passengers and cyclists, paid for by the car fares.",
		"The 1962 chain ferry will be retired when its replacement arrives next spring.", // figure caption
		"But the river decides what works here, not us.”",
	} {
		require.Contains(t, doc.Markdown, kept)
	}
}

func TestDocumentationPagesKeepCodeAndTables(t *testing.T) {
	cases := []struct {
		page       string
		fences     []string // fenced code blocks that must appear verbatim
		tableRows  []string // table lines that must appear verbatim
		furniture  []string // sidebar, navigation and footer text that must not
		admonition string   // admonition text that must survive
	}{
		{
			page: "docusaurus",
			fences: []string{
				"```yaml\nbroker: redis://localhost:6379/0\nqueues:\n  - name: emails\n    concurrency: 8\n    max_retries: 5\n```",
				"```bash\nHARBOR_BROKER=redis://queue.internal:6379/2 \\\nHARBOR_CONCURRENCY=16 \\\n  harbor worker --queue emails\n```",
				"```go\nw, err := harbor.NewWorker(harbor.Options{\n\tBroker:      \"redis://localhost:6379/0\",\n\tConcurrency: 8,\n})\nif err != nil {\n\tlog.Fatal(err)\n}\n```",
			},
			tableRows: []string{
				"| Setting | Environment variable | Default | Meaning |\n|---|---|---|---|\n",
				"| `max_retries` | `HARBOR_MAX_RETRIES` | `3` | Attempts after the first failure before a job is dead-lettered. |",
			},
			furniture:  []string{"Retries and backoff", "Scheduled jobs", "On this page", "Edit this page", "Last updated", "Copy", "Previous", "Discord", "Built with Docusaurus", "Skip to main content"},
			admonition: "Keys are case-sensitive. `Concurrency` is silently ignored",
		},
		{
			page: "sphinx",
			fences: []string{
				"```python\nimport tidepool\n\npool = tidepool.connect(\"postgres://app@db.internal/orders\", max_size=10)\nwith pool.acquire() as conn:\n    rows = conn.fetch(\"SELECT id, total FROM orders WHERE total > $1\", 100)\npool.close()\n```",
				"```console\n$ docker run -d -p 5432:5432 -e POSTGRES_PASSWORD=dev postgres:16\n$ python examples/quickstart.py\nfetched 42 rows\n```",
				"```\nfetched <count> rows\n```",
			},
			tableRows: []string{
				"| Scheme | Driver | Notes |\n|---|---|---|\n",
				"| `sqlite` | aiosqlite | One writer at a time; pools larger than one only help readers. |",
			},
			furniture:  []string{"Search docs", "User guide", "Changelog", "View page source", "Previous", "Copyright", "Built with", "¶"},
			admonition: "The pool opens connections lazily.",
		},
		{
			page: "mkdocs",
			fences: []string{
				"```ini\n[Unit]\nDescription=Squall event store\nAfter=network-online.target\n\n[Service]\nExecStart=/usr/local/bin/squall serve\nRestart=on-failure\nUser=squall\n```",
				"```bash\nsudo systemctl daemon-reload\nsudo systemctl enable --now squall\n```",
				"```nginx\nlocation / {\n    proxy_pass http://127.0.0.1:7070;\n    proxy_set_header Host $host;\n}\n```",
			},
			tableRows: []string{
				"| Resource | Minimum | Recommended |\n|---|---|---|\n",
				"| Disk (per million events) | 120 MiB | 1 GiB |",
			},
			furniture:  []string{"Initializing search", "Table of contents", "CLI reference", "Skip to content", "Made with", "Cookie consent", "Google Analytics", "Manage settings", "¶"},
			admonition: "Run `squall check` after editing the configuration",
		},
	}
	for _, tc := range cases {
		t.Run(tc.page, func(t *testing.T) {
			md := readGolden(t, tc.page).Markdown
			for _, f := range tc.fences {
				require.Contains(t, md, f)
			}
			for _, r := range tc.tableRows {
				require.Contains(t, md, r)
			}
			for _, f := range tc.furniture {
				require.NotContains(t, md, f)
			}
			require.Contains(t, md, tc.admonition)
			// Every fence opened is closed: an even number of fence lines.
			fences := 0
			for _, line := range strings.Split(md, "\n") {
				if strings.HasPrefix(line, "```") {
					fences++
				}
			}
			require.Equal(t, 2*len(tc.fences), fences, "every code block is one fenced block")
		})
	}
}

func TestLinksAndCanonicalOfLinksPage(t *testing.T) {
	doc := readGolden(t, "links")
	require.Equal(t, "Handbook: Release checklist", doc.Title, "whitespace collapsed")
	// rel tokens are case-insensitive, the first canonical wins, it is
	// resolved against <base href> and loses its fragment.
	require.Equal(t, "https://mirror.example.net/handbook/v2/release.html", doc.Canonical)
	require.Equal(t, []string{
		"https://mirror.example.net/handbook/v1/release.html",
		"https://mirror.example.net/",
		"https://mirror.example.net/handbook/v2/changelog.html", // also "#unreleased", and absolute in the footer
		"https://ci.example.org/pipelines?branch=main&status=green",
		"https://mirror.example.net/handbook/v2/", // "#versioning" against the base
		"https://blog.example.org/releases/",
		"https://Docs.Example.org/Upgrade%20Guide",
		"https://mirror.example.net/handbook/v2/release.html", // whitespace trimmed
		"https://mirror.example.net/legal/imprint",
	}, doc.Links)
	require.Contains(t, doc.Markdown, "[unreleased section](https://mirror.example.net/handbook/v2/changelog.html#unreleased)")
	require.Contains(t, doc.Markdown, "[release mailing list](mailto:release@example.org)")
	require.Contains(t, doc.Markdown, "call the on-call phone.", "tel: link reduced to its text")
	require.Contains(t, doc.Markdown, "Bump the version with the bump helper;", "javascript: link reduced to its text")
	require.Contains(t, doc.Markdown, "Ignore the FTP archive, an empty link, an anchor without href and a broken one.")
	require.NotContains(t, doc.Markdown, "](https://mirror.example.net/handbook/v2/)", "no link may point at the page by accident")
}

func TestLegacyEncodings(t *testing.T) {
	fr := readGolden(t, "windows-1252")
	require.Equal(t, "Crêpes de la Chandeleur – Cuisine d’été", fr.Title)
	require.Contains(t, fr.Markdown, "quatre œufs, un demi-litre de lait")
	require.Contains(t, fr.Markdown, "Coût estimé : 3 € pour douze crêpes. « C’est la recette de ma grand-mère »")
	require.NotContains(t, fr.Markdown, "\uFFFD")

	ja := readGolden(t, "shift_jis")
	require.Equal(t, "増分クロールの基本 | 技術メモ", ja.Title)
	require.Contains(t, ja.Markdown, "条件付きリクエストを使えば、変わっていないページはサーバーが304を返すので")
	require.NotContains(t, ja.Markdown, "\uFFFD")
}

// page builds a small HTML page whose body holds enough text to be
// accepted as an article.
func page(head, body string) string {
	return "<!DOCTYPE html><html><head>" + head + "</head><body>" + body + "</body></html>"
}

const para = "<p>Conditional requests let a crawler ask the origin whether a page changed since the last visit. " +
	"When it did not, the origin answers 304 Not Modified without a body, which saves bandwidth on both sides " +
	"and lets the crawler revisit far more pages within the same politeness budget.</p>"

func TestCharsetPrecedence(t *testing.T) {
	latin1Title := "<title>caf\xe9</title>"                // "café" in windows-1252
	koi8Title := "<title>\xf0\xd2\xc9\xd7\xc5\xd4</title>" // "Привет" in KOI8-R
	utf8Title := "<title>café</title>"
	filler := "<meta name=\"x\" content=\"" + strings.Repeat("a", 1100) + "\">"
	cases := []struct {
		name        string
		body        string
		contentType string
		wantTitle   string
	}{
		{"meta charset", page(`<meta charset="windows-1252">`+latin1Title, para), "", "café"},
		{"meta http-equiv with quotes", page(`<meta http-equiv="content-type" content='text/html; charset="koi8-r"'>`+koi8Title, para), "", "Привет"},
		{"header beats meta", page(`<meta charset="utf-8">`+koi8Title, para), "text/html; charset=KOI8-R", "Привет"},
		{"BOM beats header", "\xEF\xBB\xBF" + page(utf8Title, para), "text/html; charset=windows-1252", "café"},
		{"UTF-16LE with BOM", utf16LE(page(`<meta charset="utf-16">`+utf8Title, para)), "", "café"},
		{"meta after 1024 bytes of head", page(filler+`<meta charset="windows-1252">`+latin1Title, para), "", "café"},
		{"UTF-16 label in meta means UTF-8", page(`<meta charset="utf-16">`+utf8Title, para), "", "café"},
		{"unknown label falls back to sniffing", page(`<meta charset="x-no-such-charset">`+utf8Title, para), "text/html; charset=bogus", "café"},
		{"undeclared valid UTF-8", page(utf8Title, para), "", "café"},
		{"undeclared invalid UTF-8 is windows-1252", page(latin1Title, para), "", "café"},
		{"meta inside body is ignored", page(utf8Title, `<p>x</p><meta charset="koi8-r">`+para), "", "café"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := extract.FromHTMLWithType([]byte(tc.body), "https://example.com/", tc.contentType)
			require.NoError(t, err)
			require.Equal(t, tc.wantTitle, doc.Title)
			require.Contains(t, doc.Markdown, "Conditional requests let a crawler")
		})
	}
}

func utf16LE(s string) string {
	b := []byte{0xFF, 0xFE}
	for _, r := range s { // ASCII and Latin-1 only in these tests
		b = append(b, byte(r), byte(r>>8))
	}
	return string(b)
}

func TestScriptRenderedDetection(t *testing.T) {
	bundle := `<script src="/static/js/main.js"></script>`
	cases := []struct {
		name    string
		html    string
		wantErr error // nil: accepted with readable text
	}{
		{"empty #root", page(bundle, `<div id="root"></div>`), extract.ErrScriptRendered},
		{"empty #__next", page("", `<div id="__next"></div><script id="__NEXT_DATA__" type="application/json">{}</script>`+bundle), extract.ErrScriptRendered},
		{"empty #app with module script", page(`<script type="module" src="/src/main.ts"></script>`, `<div id="app"></div>`), extract.ErrScriptRendered},
		{"angular app-root", page(bundle, `<app-root></app-root>`), extract.ErrScriptRendered},
		{"root with a loading message", page(bundle, `<div id="root"><p>Loading…</p></div>`), extract.ErrScriptRendered},
		{"noscript asks for JavaScript", page(bundle, `<noscript>You need to enable JavaScript to run this app.</noscript><div id="main"></div>`), extract.ErrScriptRendered},
		{"inline script only", page("", `<div id="root"></div><script>render(document.getElementById("root"))</script>`), extract.ErrScriptRendered},
		{"no text at all, unknown mount point", page(bundle, `<div id="dashboard-container" class="shell"></div>`), extract.ErrScriptRendered},
		{"empty root without any script is just empty", page("", `<div id="root"></div>`), extract.ErrEmpty},
		{"JSON-LD is not a script", page(`<script type="application/ld+json">{"@type":"WebPage"}</script>`, `<div id="root"></div>`), extract.ErrEmpty},
		{"server-rendered root", page(bundle, `<div id="root"><article><h1>Caching</h1>`+para+para+`</article></div>`), nil},
		{"empty widget mount in a long article", page(bundle, `<article>`+para+para+para+`</article><div id="app"></div>`), nil},
		{"analytics noscript on a short page", page(bundle, `<noscript><iframe src="https://www.googletagmanager.com/ns.html?id=GTM-1"></iframe></noscript><main>`+para+`</main>`), nil},
		{"comments noscript on a long page", page(bundle, `<main>`+para+para+para+`</main><noscript>Please enable JavaScript to view the comments.</noscript><div id="app"></div>`), nil},
		{"tiny static page", page("", `<p>Hello, world.</p>`), nil},
		{"no body text at all", page("<title>Nothing</title>", ""), extract.ErrEmpty},
		{"only furniture", page("", `<nav><a href="/a">A</a></nav><footer>© 2024</footer>`), extract.ErrEmpty},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := extract.FromHTML([]byte(tc.html), "https://example.com/app")
			if tc.wantErr != nil {
				require.ErrorIs(t, err, tc.wantErr)
				require.Empty(t, doc.Markdown)
				return
			}
			require.NoError(t, err)
			require.NotEmpty(t, doc.Markdown)
		})
	}
	// The two named failures are distinct.
	require.False(t, errors.Is(extract.ErrEmpty, extract.ErrScriptRendered))
}

func TestTitleOrder(t *testing.T) {
	cases := []struct {
		name, head, body, want string
	}{
		{"title element first", `<title>From title</title><meta property="og:title" content="From og">`, `<h1>From h1</h1>`, "From title"},
		{"og:title when title is blank", `<title>  </title><meta property="og:title" content=" From  og ">`, `<h1>From h1</h1>`, "From og"},
		{"og:title given as name", `<meta name="og:title" content="From og name">`, `<h1>From h1</h1>`, "From og name"},
		{"first h1 last", ``, `<h1>From <em>first</em> h1</h1><h1>Second</h1>`, "From first h1"},
		{"none", ``, ``, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc, _ := extract.FromHTML([]byte(page(tc.head, tc.body+para)), "https://example.com/")
			require.Equal(t, tc.want, doc.Title)
		})
	}
}

func TestCanonical(t *testing.T) {
	cases := []struct {
		name, head, want string
	}{
		{"absent", ``, ""},
		{"absolute", `<link rel="canonical" href="https://www.example.com/guide">`, "https://www.example.com/guide"},
		{"relative", `<link rel="canonical" href="../guide?lang=en">`, "https://example.com/docs/guide?lang=en"},
		{"protocol-relative", `<link rel="canonical" href="//cdn.example.com/guide">`, "https://cdn.example.com/guide"},
		{"fragment dropped", `<link rel="canonical" href="/guide#intro">`, "https://example.com/guide"},
		{"rel token list", `<link rel="alternate CANONICAL" href="/guide">`, "https://example.com/guide"},
		{"first wins", `<link rel="canonical" href="/first"><link rel="canonical" href="/second">`, "https://example.com/first"},
		{"resolved against base", `<base href="https://mirror.example.org/v2/"><link rel="canonical" href="guide">`, "https://mirror.example.org/v2/guide"},
		{"empty href", `<link rel="canonical" href=" ">`, ""},
		{"not http", `<link rel="canonical" href="javascript:alert(1)">`, ""},
		{"ftp", `<link rel="canonical" href="ftp://example.com/guide">`, ""},
		{"unparsable", `<link rel="canonical" href="http://[::1">`, ""},
		{"no href", `<link rel="canonical">`, ""},
		{"other rel only", `<link rel="alternate" href="/other">`, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := extract.FromHTML([]byte(page(tc.head, para)), "https://example.com/docs/a/page")
			require.NoError(t, err)
			require.Equal(t, tc.want, doc.Canonical)
		})
	}
}

func TestBadInput(t *testing.T) {
	t.Run("too large", func(t *testing.T) {
		body := []byte(strings.Repeat("a", extract.DefaultMaxBytes+1))
		_, err := extract.FromHTML(body, "https://example.com/")
		var tooLarge *extract.TooLargeError
		require.ErrorAs(t, err, &tooLarge)
		require.Equal(t, extract.DefaultMaxBytes+1, tooLarge.Size)
		require.Equal(t, extract.DefaultMaxBytes, tooLarge.Limit)
	})
	t.Run("custom cap", func(t *testing.T) {
		body := []byte(page("", para))
		_, err := extract.FromHTMLWithOptions(body, "https://example.com/", extract.Options{MaxBytes: len(body)})
		require.NoError(t, err, "a page exactly at the cap is accepted")
		_, err = extract.FromHTMLWithOptions(body, "https://example.com/", extract.Options{MaxBytes: len(body) - 1})
		var tooLarge *extract.TooLargeError
		require.ErrorAs(t, err, &tooLarge)
		require.Equal(t, len(body)-1, tooLarge.Limit)
	})
	t.Run("page URL", func(t *testing.T) {
		for _, u := range []string{"", "/docs/page", "example.com/page", "ftp://example.com/", "http://", "mailto:a@example.com", "http://[::1"} {
			_, err := extract.FromHTML([]byte(page("", para)), u)
			require.ErrorIs(t, err, extract.ErrPageURL, u)
		}
	})
	t.Run("nesting too deep", func(t *testing.T) {
		body := strings.Repeat("<div>", 600) + para
		_, err := extract.FromHTML([]byte(body), "https://example.com/")
		require.ErrorIs(t, err, extract.ErrMalformed)
	})
	t.Run("binary garbage", func(t *testing.T) {
		body := make([]byte, 4096)
		for i := range body {
			body[i] = byte(i * 7)
		}
		_, err := extract.FromHTML(body, "https://example.com/")
		if err != nil {
			require.True(t, errors.Is(err, extract.ErrEmpty) || errors.Is(err, extract.ErrScriptRendered), err)
		}
	})
}

// TestConcurrentUse runs FromHTML on every golden page from several
// goroutines at once (run it with -race): the shared Markdown converter and
// everything else must give each caller the result a lone caller gets.
func TestConcurrentUse(t *testing.T) {
	type input struct {
		tc   goldenCase
		body []byte
		want string
	}
	var inputs []input
	for _, tc := range goldenCases {
		body, err := os.ReadFile(filepath.Join("testdata", "golden", tc.name+".html"))
		require.NoError(t, err)
		d, err := extract.FromHTMLWithType(body, tc.url, tc.contentType)
		inputs = append(inputs, input{tc, body, render(d, err)})
	}
	const workers, rounds = 8, 3
	var wg sync.WaitGroup
	errs := make(chan error, workers*rounds*len(inputs))
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				for i := range inputs {
					in := inputs[(i+w+r)%len(inputs)]
					d, err := extract.FromHTMLWithType(in.body, in.tc.url, in.tc.contentType)
					if got := render(d, err); got != in.want {
						errs <- fmt.Errorf("%s: concurrent result differs from the sequential one", in.tc.name)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
