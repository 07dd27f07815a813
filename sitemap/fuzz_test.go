package sitemap_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/recrawl/recrawl/sitemap"
)

// FuzzParse checks that no input makes Parse panic, hang or break its
// contract: entries are trimmed, non-empty and within the loc cap, dates are
// UTC, priorities are in range, and every error is one of the typed errors.
func FuzzParse(f *testing.F) {
	inputs, err := filepath.Glob(filepath.Join("testdata", "golden", "*"))
	if err != nil {
		f.Fatal(err)
	}
	for _, path := range inputs {
		if strings.HasSuffix(path, ".golden") {
			continue
		}
		data, err := os.ReadFile(path)
		if err != nil {
			f.Fatal(err)
		}
		if len(data) <= 64<<10 {
			f.Add(data)
		}
	}
	f.Add([]byte(urlset(`<url><loc>http://a.example/</loc><lastmod>2024-02-29T23:59:59.999+14:00</lastmod><priority>1.0</priority></url>`)))
	f.Add([]byte("<rss><channel><item><guid>http://a.example/g</guid></item></channel></rss>"))
	f.Add([]byte("<feed><entry><link href='http://a.example/'/><id>http://a.example/id</id></entry></feed>"))
	f.Add(gz(f, gz(f, []byte("http://a.example/\n"))))

	const maxLoc = 256
	p := sitemap.Parser{MaxBytes: 1 << 20, MaxLocBytes: maxLoc}
	f.Fuzz(func(t *testing.T, data []byte) {
		n := 0
		kind, err := p.Parse(bytes.NewReader(data), func(e sitemap.Entry) error {
			n++
			if e.Loc == "" || len(e.Loc) > maxLoc || strings.Trim(e.Loc, " \t\r\n\f\v") != e.Loc {
				t.Fatalf("bad loc %q", e.Loc)
			}
			if !e.LastMod.IsZero() && e.LastMod.Location() != time.UTC {
				t.Fatalf("lastmod not in UTC: %v", e.LastMod)
			}
			if e.HasPriority && !(e.Priority >= 0 && e.Priority <= 1) {
				t.Fatalf("priority out of range: %v", e.Priority)
			}
			if !e.HasPriority && e.Priority != 0 {
				t.Fatalf("priority without HasPriority: %v", e.Priority)
			}
			switch e.ChangeFreq {
			case "", sitemap.Always, sitemap.Hourly, sitemap.Daily, sitemap.Weekly, sitemap.Monthly, sitemap.Yearly, sitemap.Never:
			default:
				t.Fatalf("unknown changefreq %q", e.ChangeFreq)
			}
			return nil
		})
		if kind < sitemap.Unknown || kind > sitemap.Atom {
			t.Fatalf("kind out of range: %d", kind)
		}
		if kind == sitemap.Unknown && (err == nil || n > 0) {
			t.Fatalf("unknown kind with %d entries and error %v", n, err)
		}
		if err == nil {
			return
		}
		var (
			fe *sitemap.FormatError
			se *sitemap.SyntaxError
			tl *sitemap.TooLargeError
		)
		if errors.As(err, &fe) && kind != sitemap.Unknown {
			t.Fatalf("format error with kind %v", kind)
		}
		if !errors.As(err, &fe) && !errors.As(err, &se) && !errors.As(err, &tl) {
			t.Fatalf("untyped error %T: %v", err, err)
		}
		if err.Error() == "" {
			t.Fatal("empty error message")
		}
	})
}
