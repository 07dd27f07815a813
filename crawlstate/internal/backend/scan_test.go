package backend

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
)

// row is a Scanner over stored values, as a driver hands them out.
type row []any

func (r row) Scan(dest ...any) error {
	if len(dest) != len(r) {
		return fmt.Errorf("%d destinations for %d columns", len(dest), len(r))
	}
	for i, v := range r {
		switch d := dest[i].(type) {
		case *string:
			*d = v.(string)
		case *int64:
			*d = v.(int64)
		case *int:
			*d = v.(int)
		case *[]byte:
			*d = v.([]byte)
		default:
			return fmt.Errorf("destination %d is %T", i, d)
		}
	}
	return nil
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 123, time.UTC)

func TestScanAlert(t *testing.T) {
	a, err := ScanAlert(row{"id", "docs", "https://ex.com/a", "changed", EncTime(t0), []byte{}, int64(ZeroTime), 2, "boom"})
	require.NoError(t, err)
	require.Equal(t, crawlstate.Alert{ID: "id", Source: "docs", URL: "https://ex.com/a", Kind: "changed", CreatedAt: t0,
		Attempts: 2, LastError: "boom"}, a, "an empty payload is nil, a zero delivery time zero")
	_, err = ScanAlert(row{"id"})
	require.Error(t, err)
}

func TestStoredAlert(t *testing.T) {
	r := crawlstate.Result{URL: "https://ex.com/a", Alert: &crawlstate.Alert{ID: "x", Kind: "new"}}
	a := StoredAlert("docs", &r)
	require.Equal(t, crawlstate.Alert{ID: "x", Source: "docs", URL: "https://ex.com/a", Kind: "new", Payload: []byte{}}, a)
	r.Alert.URL, r.Alert.Payload = "https://ex.com/b", []byte(`{}`)
	a = StoredAlert("docs", &r)
	require.Equal(t, "https://ex.com/b", a.URL, "an alert's own URL is kept")
	require.Equal(t, []byte(`{}`), a.Payload)
	require.Empty(t, r.Alert.Source, "the result's alert is not changed")
}

func TestScanDocument(t *testing.T) {
	d, err := ScanDocument(row{"https://ex.com/sitemap.xml", `"e"`, "", 40, EncTime(t0), int64(ZeroTime), EncTime(t0.Add(time.Hour))})
	require.NoError(t, err)
	require.Equal(t, crawlstate.Document{URL: "https://ex.com/sitemap.xml", ETag: `"e"`, Entries: 40, NewestLastMod: t0,
		FetchedAt: t0.Add(time.Hour)}, d)
}

func TestTake(t *testing.T) {
	const c = Checker("crawlstate/test")
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, nil))
	held, err := ScanLock(row{"A", EncTime(t0), EncTime(t0.Add(time.Minute))})
	require.NoError(t, err)
	require.Equal(t, Lock{Owner: "A", Acquired: t0, Expires: t0.Add(time.Minute)}, held)

	takeover, err := c.Take(log, "docs", "A", t0.Add(time.Hour), held)
	require.NoError(t, err)
	require.False(t, takeover, "the holder extends its own lock, expired or not")

	_, err = c.Take(log, "docs", "B", t0.Add(time.Second), held)
	var he *crawlstate.LockHeldError
	require.True(t, errors.As(err, &he))
	require.Equal(t, crawlstate.LockHeldError{Source: "docs", Owner: "A", Acquired: t0, Expires: t0.Add(time.Minute)}, *he)
	require.ErrorIs(t, err, crawlstate.ErrRunInProgress)
	require.Empty(t, logged.String())

	takeover, err = c.Take(log, "docs", "B", t0.Add(time.Minute), held)
	require.NoError(t, err)
	require.True(t, takeover, "a lock is held until, not including, its expiry")
	require.Contains(t, logged.String(), "crawlstate/test: took over an expired run lock")
	require.Contains(t, logged.String(), "previous_owner=A")

	takeover, err = c.Take(nil, "docs", "B", t0.Add(time.Hour), held)
	require.NoError(t, err)
	require.True(t, takeover, "without a logger the takeover is not logged")
}

func TestNoSuchDocument(t *testing.T) {
	err := Checker("crawlstate/test").NoSuchDocument("document", "docs", "https://ex.com/s.xml")
	require.ErrorIs(t, err, crawlstate.ErrNotFound)
	require.ErrorContains(t, err, `crawlstate/test: document: "https://ex.com/s.xml" of source "docs"`)
}

func TestDocumentArgsRoundTrip(t *testing.T) {
	d := crawlstate.Document{URL: "https://ex.com/s.xml", ETag: `"e"`, LastModified: "Sun, 01 Mar 2026 12:00:00 GMT", Entries: 3,
		NewestLastMod: t0, FetchedAt: t0.Add(time.Minute)}
	args := DocumentArgs("docs", d)
	require.Equal(t, "docs", args[0])
	got, err := ScanDocument(row(args[1:]))
	require.NoError(t, err)
	require.Equal(t, d, got)
}
