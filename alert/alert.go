package alert

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// Kind says what happened to a page.
type Kind string

// The kinds of change an alert reports.
const (
	// New is a page seen with content for the first time.
	New Kind = "new"
	// Changed is a page whose content hash moved from OldHash to NewHash.
	Changed Kind = "changed"
	// Removed is a page that answered 404 or 410 (it became a tombstone).
	Removed Kind = "removed"
)

// Valid reports whether k is one of New, Changed and Removed.
func (k Kind) Valid() bool { return k == New || k == Changed || k == Removed }

// Alert is one page change with the evidence behind it. Its JSON form (field
// names in snake_case) is what the JSONL and Webhook sinks send; the field
// names are stable. Empty optional fields (original_url, title, the chunk
// lists, diff, record_ids) are left out.
type Alert struct {
	// ID is ID(URL, OldHash, NewHash): the same change always has the same
	// ID, so receivers deduplicate redeliveries by it.
	ID string `json:"id"`
	// Kind is New, Changed or Removed.
	Kind Kind `json:"kind"`
	// Source names the configured source the page came from.
	Source string `json:"source"`
	// URL is the canonical URL, the page's identity.
	URL string `json:"url"`
	// OriginalURL is the URL as discovered, before normalization, when it
	// differs from URL.
	OriginalURL string `json:"original_url,omitempty"`
	// OldHash is the content hash before the change ("" for New).
	OldHash string `json:"old_hash"`
	// NewHash is the content hash after the change ("" for Removed).
	NewHash string `json:"new_hash"`
	// DetectedAt is when the change was seen, from the engine's clock.
	DetectedAt time.Time `json:"detected_at"`
	// Title is the page title, when known.
	Title string `json:"title,omitempty"`
	// Added, Removed and Changed list the chunks that appeared, disappeared
	// and changed text.
	Added   []ChunkChange `json:"added,omitempty"`
	Removed []ChunkChange `json:"removed,omitempty"`
	Changed []ChunkChange `json:"changed,omitempty"`
	// Diff is a unified diff (see Diff) of the changed text.
	Diff string `json:"diff,omitempty"`
	// RecordIDs are the vector records written for the new content.
	RecordIDs []string `json:"record_ids,omitempty"`
}

// ChunkChange is one chunk that was added, removed or changed.
type ChunkChange struct {
	// Ordinal is the chunk's position in the new document (in the old one
	// for a removed chunk).
	Ordinal int `json:"ordinal"`
	// HeadingPath is the chain of headings above the chunk, e.g.
	// "Guide > Install".
	HeadingPath string `json:"heading_path,omitempty"`
	// Start and End are the chunk's byte range [Start, End) in the new
	// Markdown (in the old Markdown for a removed chunk).
	Start int `json:"start"`
	End   int `json:"end"`
	// OldText and NewText are the chunk's text before and after; one of
	// them is empty for an added or removed chunk.
	OldText string `json:"old_text,omitempty"`
	NewText string `json:"new_text,omitempty"`
	// OldRecordID and NewRecordID are the vector record IDs of the chunk
	// before and after.
	OldRecordID string `json:"old_record_id,omitempty"`
	NewRecordID string `json:"new_record_id,omitempty"`
}

// ID returns the identity of a change: the lowercase hex SHA-256 of url,
// oldHash and newHash joined with a NUL byte ("url\x00old\x00new"). A
// canonical URL and a hex hash never contain NUL, so distinct triples never
// share an input. It is deterministic across processes and versions.
func ID(url, oldHash, newHash string) string {
	buf := make([]byte, 0, len(url)+len(oldHash)+len(newHash)+2)
	buf = append(append(append(append(append(buf, url...), 0), oldHash...), 0), newHash...)
	sum := sha256.Sum256(buf)
	return hex.EncodeToString(sum[:])
}

// ErrInvalid is wrapped by the error of Validate, and so by JSONL and
// Webhook when they refuse an alert.
var ErrInvalid = errors.New("alert: invalid alert")

// Validate checks what a receiver relies on: URL is set, Kind is known, the
// hashes fit the kind (New needs NewHash; Changed needs two different
// hashes; Removed needs OldHash) and ID equals ID(URL, OldHash, NewHash).
// The error wraps ErrInvalid and says which field is wrong.
func (a *Alert) Validate() error {
	switch {
	case a.URL == "":
		return fmt.Errorf("%w: url is empty; set the canonical URL", ErrInvalid)
	case !a.Kind.Valid():
		return fmt.Errorf("%w: kind %q; use %q, %q or %q", ErrInvalid, a.Kind, New, Changed, Removed)
	case a.Kind == New && a.NewHash == "":
		return fmt.Errorf("%w: kind new without new_hash", ErrInvalid)
	case a.Kind == Changed && (a.OldHash == "" || a.NewHash == ""):
		return fmt.Errorf("%w: kind changed needs old_hash and new_hash", ErrInvalid)
	case a.Kind == Changed && a.OldHash == a.NewHash:
		return fmt.Errorf("%w: kind changed with old_hash equal to new_hash", ErrInvalid)
	case a.Kind == Removed && a.OldHash == "":
		return fmt.Errorf("%w: kind removed without old_hash", ErrInvalid)
	}
	if want := ID(a.URL, a.OldHash, a.NewHash); a.ID != want {
		return fmt.Errorf("%w: id %q is not alert.ID(url, old_hash, new_hash) = %q", ErrInvalid, a.ID, want)
	}
	return nil
}
