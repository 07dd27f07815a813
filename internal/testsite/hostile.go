package testsite

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// Hostile behaviours: bodies generated while they are served (never held in
// memory, so a test can measure the client's memory alone), gzip bombs,
// fan-out sitemap indexes and answers that trickle.

// generated is a document produced on the fly: head, then item(0) ..
// item(n-1), then tail.
type generated struct {
	contentType string
	encoding    string // Content-Encoding, if any
	head, tail  string
	n           int
	item        func(i int) string
}

// Generate makes path answer a body of contentType made of head, item(i)
// for i in [0, n) and tail, written as it is produced: the body is never
// held in memory, however large n is. It returns the document's URL.
func (s *Site) Generate(path, contentType, head string, n int, item func(i int) string, tail string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gens == nil {
		s.gens = map[string]generated{}
	}
	s.gens[path] = generated{contentType: contentType, head: head, tail: tail, n: n, item: item}
	return s.base + path
}

// HugeSitemap makes path a urlset of n URLs of pages under the site's
// PathPrefix (which need not exist), generated while served. It returns
// the sitemap's URL.
func (s *Site) HugeSitemap(path string, n int) string {
	base := s.base + s.opts.PathPrefix
	return s.Generate(path, "application/xml",
		`<?xml version="1.0" encoding="UTF-8"?>`+"\n"+`<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">`+"\n", n,
		func(i int) string { return fmt.Sprintf("<url><loc>%sgen-%d</loc></url>\n", base, i) },
		"</urlset>\n")
}

// HugeLLMs makes path an llms.txt file listing n pages under the site's
// PathPrefix (which need not exist), generated while served. It returns
// the file's URL.
func (s *Site) HugeLLMs(path string, n int) string {
	prefix := s.opts.PathPrefix
	return s.Generate(path, "text/plain; charset=utf-8", "# Huge Docs\n\n> An llms.txt file with many links.\n\n## Pages\n\n", n,
		func(i int) string { return fmt.Sprintf("- [Page %d](%sgen-%d): generated page\n", i, prefix, i) },
		"")
}

// HugeLinks makes path an HTML page with n links to pages under the
// site's PathPrefix (which need not exist), generated while served. It
// returns the page's URL.
func (s *Site) HugeLinks(path string, n int) string {
	prefix := s.opts.PathPrefix
	return s.Generate(path, "text/html; charset=utf-8",
		"<!doctype html>\n<html><head><title>Many links</title></head><body><main><h1>Many links</h1>\n<ul>\n", n,
		func(i int) string { return fmt.Sprintf("<li><a href=\"%sgen-%d\">Page %d</a></li>\n", prefix, i, i) },
		"</ul></main></body></html>\n")
}

// GzipBomb makes path answer a gzip stream that inflates to head, then mib
// MiB of blanks, then tail: concatenated gzip members, about 1 KiB on the
// wire per MiB inflated, generated while served. With encoded the answer
// is a contentType body sent with Content-Encoding: gzip, which an HTTP
// client's transport inflates on the fly; without it, it is a gzip file
// of contentType (such as application/gzip for a sitemap.xml.gz). It
// returns the URL.
func (s *Site) GzipBomb(path, contentType, head string, mib int, tail string, encoded bool) string {
	member := func(b []byte) string {
		var buf bytes.Buffer
		zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
		zw.Write(b)
		zw.Close()
		return buf.String()
	}
	blank := member(bytes.Repeat([]byte(" "), 1<<20))
	g := generated{contentType: contentType, head: member([]byte(head)), tail: member([]byte(tail)), n: mib,
		item: func(int) string { return blank }}
	if encoded {
		g.encoding = "gzip"
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.gens == nil {
		s.gens = map[string]generated{}
	}
	s.gens[path] = g
	return s.base + path
}

// FanOut serves a sitemap index tree under prefix (such as "/fan/"):
// every document prefix+"<k>.xml" is a sitemap index listing width child
// indexes, prefix+"<k·width+1>.xml" .. prefix+"<k·width+width>.xml", so
// the tree never ends and each level is width times larger than the one
// above. Documents are generated while served. It returns the URL of the
// root, prefix+"0.xml".
func (s *Site) FanOut(prefix string, width int) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fanouts == nil {
		s.fanouts = map[string]int{}
	}
	s.fanouts[prefix] = width
	return s.base + prefix + "0.xml"
}

// fanOutLocked returns the generated index for path, if path is a
// document of a FanOut tree.
func (s *Site) fanOutLocked(path string) (generated, bool) {
	for prefix, width := range s.fanouts {
		rest, ok := strings.CutPrefix(path, prefix)
		if !ok {
			continue
		}
		var k int
		if _, err := fmt.Sscanf(rest, "%d.xml", &k); err != nil || fmt.Sprintf("%d.xml", k) != rest || k < 0 {
			continue
		}
		base := s.base + prefix
		return generated{
			contentType: "application/xml",
			head:        `<?xml version="1.0" encoding="UTF-8"?>` + "\n" + `<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">` + "\n",
			n:           width,
			item: func(i int) string {
				return fmt.Sprintf("<sitemap><loc>%s%d.xml</loc></sitemap>\n", base, k*width+i+1)
			},
			tail: "</sitemapindex>\n",
		}, true
	}
	return generated{}, false
}

// serveGenerated writes g, stopping when the client hangs up.
func serveGenerated(w http.ResponseWriter, r *http.Request, g generated) {
	w.Header().Set("Content-Type", g.contentType)
	if g.encoding != "" {
		w.Header().Set("Content-Encoding", g.encoding)
	}
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return
	}
	bw := &stickyWriter{w: w}
	io.WriteString(bw, g.head)
	for i := 0; i < g.n && bw.err == nil; i++ {
		io.WriteString(bw, g.item(i))
	}
	io.WriteString(bw, g.tail)
}

// stickyWriter remembers the first write error (the client hung up).
type stickyWriter struct {
	w   io.Writer
	err error
}

func (s *stickyWriter) Write(b []byte) (int, error) {
	if s.err != nil {
		return 0, s.err
	}
	n, err := s.w.Write(b)
	s.err = err
	return n, err
}

// Trickle makes every answer for path (a page, robots.txt, a sitemap, any
// document) arrive one byte per interval of real time after its headers,
// until the client hangs up. It stands for a server that holds a
// connection open for as long as the client lets it; real time, not the
// site's clock, since what it tests is a client's request timeout, which
// bounds network I/O. An interval of 0 turns it off.
func (s *Site) Trickle(path string, every time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.trickles == nil {
		s.trickles = map[string]time.Duration{}
	}
	if every <= 0 {
		delete(s.trickles, path)
		return
	}
	s.trickles[path] = every
}

// trickleWriter sends each body byte separately, every interval.
type trickleWriter struct {
	http.ResponseWriter
	r       *http.Request
	every   time.Duration
	started bool
}

func (t *trickleWriter) WriteHeader(code int) {
	t.ResponseWriter.WriteHeader(code)
	t.flush()
}

func (t *trickleWriter) Write(b []byte) (int, error) {
	for i := range b {
		if t.started {
			timer := time.NewTimer(t.every)
			select {
			case <-timer.C:
			case <-t.r.Context().Done():
				timer.Stop()
				return i, t.r.Context().Err()
			}
		}
		t.started = true
		if _, err := t.ResponseWriter.Write(b[i : i+1]); err != nil {
			return i, err
		}
		t.flush()
	}
	return len(b), nil
}

func (t *trickleWriter) flush() { _ = http.NewResponseController(t.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the server's writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// Overclaim makes path answer 200 with a Content-Length of declared bytes,
// send a few bytes of HTML and hang up: a server that announces large
// bodies it never sends, to make a client reserve memory for them.
// declared <= 0 serves the page normally again.
func (s *Site) Overclaim(path string, declared int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if declared <= 0 {
		delete(s.overclaims, path)
		return
	}
	s.overclaims[path] = declared
}

// overclaimBody is what an Overclaim answer sends of its declared body.
const overclaimBody = "<!doctype html><title>soon</title><p>"

func serveOverclaim(w http.ResponseWriter, declared int64) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		http.Error(w, "testsite: cannot hang up mid-body: "+err.Error(), http.StatusInternalServerError)
		return
	}
	defer conn.Close() // the connection is closed mid-body
	fmt.Fprintf(conn, "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: %d\r\n\r\n%s",
		max(declared, int64(len(overclaimBody))), overclaimBody)
}
