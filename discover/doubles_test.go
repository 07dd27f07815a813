package discover_test

import (
	"context"
	"github.com/recrawl/recrawl/crawlstate"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/extract"
	"github.com/recrawl/recrawl/internal/testsite"
)

// memStore is a DocumentStore in memory, with the unchanged documents
// reported to its OnUnchanged.
type memStore struct {
	mu        sync.Mutex
	docs      map[string]crawlstate.Document
	puts      int
	unchanged []string
	err       error // returned by Document when set
}

func newMemStore() *memStore { return &memStore{docs: map[string]crawlstate.Document{}} }

func (m *memStore) Document(_ context.Context, _, url string) (crawlstate.Document, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return crawlstate.Document{}, m.err
	}
	d, ok := m.docs[url]
	if !ok {
		return crawlstate.Document{}, crawlstate.ErrNotFound
	}
	return d, nil
}

// get returns the stored document of url.
func (m *memStore) get(url string) (crawlstate.Document, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	d, ok := m.docs[url]
	return d, ok
}

func (m *memStore) TouchListed(context.Context, string, string, time.Time) (int, error) {
	return 0, nil
}

func (m *memStore) PutDocument(_ context.Context, _ string, d crawlstate.Document) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.docs[d.URL] = d
	m.puts++
	return nil
}

func (m *memStore) OnUnchanged(_ context.Context, url string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.unchanged = append(m.unchanged, url)
	return nil
}

// takeUnchanged returns and clears the documents reported unchanged.
func (m *memStore) takeUnchanged() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	u := m.unchanged
	m.unchanged = nil
	return u
}

// incremental returns an Env with the store and its OnUnchanged.
func (m *memStore) incremental(c *http.Client) discover.Env {
	return discover.Env{Client: c, Documents: m, OnUnchanged: m.OnUnchanged}
}

// run discovers src with env and returns every link yielded.
func run(t *testing.T, src discover.Source, env discover.Env) ([]discover.Link, error) {
	t.Helper()
	var out []discover.Link
	err := src.Discover(context.Background(), env, func(l discover.Link) error {
		out = append(out, l)
		return nil
	})
	return out, err
}

// urlsOf returns the links' URLs with the site's base URL cut off.
func urlsOf(site *testsite.Site, links []discover.Link) []string {
	out := make([]string, len(links))
	for i, l := range links {
		out[i] = strings.TrimPrefix(l.URL, site.URL())
	}
	return out
}

// paths returns the paths of the logged requests, in order.
func paths(reqs []testsite.Request) []string {
	out := make([]string, len(reqs))
	for i, r := range reqs {
		out[i] = r.Path
	}
	return out
}

// pageKey is the context key the handler double marks page requests with.
type pageKey struct{}

// handlerDouble is a PageHandler that remembers validators and links like
// the engine does: Prepare returns the stored validators and a context
// marked with the URL, Handle stores the links of a 200 (extracted with
// the extract package) and returns the stored ones for a 304.
type handlerDouble struct {
	mu       sync.Mutex
	stored   map[string]discover.Validators
	links    map[string][]string
	skip     map[string]string // URL → skip reason Prepare returns
	prepared []string
	handled  []discover.CrawledPage
}

func newHandlerDouble() *handlerDouble {
	return &handlerDouble{stored: map[string]discover.Validators{}, links: map[string][]string{}, skip: map[string]string{}}
}

func (h *handlerDouble) Prepare(ctx context.Context, rawURL string, _ int) (context.Context, discover.Validators, string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.prepared = append(h.prepared, rawURL)
	return context.WithValue(ctx, pageKey{}, rawURL), h.stored[rawURL], h.skip[rawURL], nil
}

func (h *handlerDouble) Handle(_ context.Context, p discover.CrawledPage) ([]string, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.handled = append(h.handled, p)
	switch {
	case p.Err != nil:
		return nil, nil
	case p.Status == http.StatusNotModified:
		return h.links[p.URL], nil
	case p.Status == http.StatusOK:
		doc, err := extract.FromHTMLWithType(p.Body, p.FinalURL, p.ContentType)
		if err != nil {
			return nil, nil // not HTML: no links
		}
		h.stored[p.URL] = discover.Validators{ETag: p.Header.Get("ETag"), LastModified: p.Header.Get("Last-Modified")}
		h.links[p.URL] = slices.Clone(doc.Links)
		return doc.Links, nil
	}
	return nil, nil
}

// statuses returns the handled pages' statuses by URL path.
func (h *handlerDouble) statuses(site *testsite.Site) map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := map[string]int{}
	for _, p := range h.handled {
		out[strings.TrimPrefix(p.URL, site.URL())] = p.Status
	}
	return out
}

func (h *handlerDouble) reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.prepared, h.handled = nil, nil
}

var (
	_ crawlstate.DocumentStore = (*memStore)(nil)
	_ discover.PageHandler     = (*handlerDouble)(nil)
)
