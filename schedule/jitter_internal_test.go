package schedule

import (
	"fmt"
	"hash/fnv"
	"testing"
)

// jitterHash hashes exactly what fmt.Fprintf into FNV-1a did, so every
// row keeps the next check it had.
func TestJitterHashMatchesFNV(t *testing.T) {
	for _, c := range []struct {
		url    string
		visits int
	}{{"", 0}, {"https://docs.example.com/a", 1}, {"https://example.com/ü?q=1", 12345}, {"x", -3}} {
		h := fnv.New64a()
		fmt.Fprintf(h, "%s\x00%d", c.url, c.visits)
		if got, want := jitterHash(c.url, c.visits), h.Sum64(); got != want {
			t.Errorf("jitterHash(%q, %d) = %x, want %x", c.url, c.visits, got, want)
		}
	}
}
