package alert_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/alert"
)

func TestIDIsSHA256OfNULJoinedTriple(t *testing.T) {
	sum := sha256.Sum256([]byte("https://example.com/a\x00old\x00new"))
	require.Equal(t, hex.EncodeToString(sum[:]), alert.ID("https://example.com/a", "old", "new"))
	// A fixed value (printf 'u\0o\0n' | sha256sum), so a change of the
	// scheme cannot go unnoticed: IDs live in state and at receivers.
	require.Equal(t, "fa80d2b14e21b7f3d76246311a8167287a957ee32a84916f091ac2ea930183aa", alert.ID("u", "o", "n"))
}

func TestIDDeterministicAndSensitiveToEachInput(t *testing.T) {
	base := alert.ID("https://example.com/a", hashA, hashB)
	require.Len(t, base, 64)
	require.Equal(t, base, alert.ID("https://example.com/a", hashA, hashB))
	cases := []struct {
		name          string
		url, old, new string
	}{
		{"url", "https://example.com/b", hashA, hashB},
		{"old hash", "https://example.com/a", hashB, hashB},
		{"new hash", "https://example.com/a", hashA, hashA},
		{"swapped hashes", "https://example.com/a", hashB, hashA},
		{"empty old", "https://example.com/a", "", hashB},
		{"empty new", "https://example.com/a", hashA, ""},
		// The separator keeps a shifted boundary from colliding.
		{"boundary moved", "https://example.com/a" + hashA[:1], hashA[1:], hashB},
	}
	seen := map[string]string{base: "base"}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			id := alert.ID(c.url, c.old, c.new)
			prev, dup := seen[id]
			require.False(t, dup, "same ID as %s", prev)
			seen[id] = c.name
		})
	}
}

func TestKindValid(t *testing.T) {
	for _, k := range []alert.Kind{alert.New, alert.Changed, alert.Removed} {
		require.True(t, k.Valid(), k)
	}
	for _, k := range []alert.Kind{"", "NEW", "deleted"} {
		require.False(t, k.Valid(), k)
	}
}

func TestValidate(t *testing.T) {
	const u = "https://example.com/p"
	ok := func(kind alert.Kind, old, new string) alert.Alert {
		return alert.Alert{ID: alert.ID(u, old, new), Kind: kind, URL: u, OldHash: old, NewHash: new}
	}
	cases := []struct {
		name   string
		a      alert.Alert
		errHas string // "" = valid
	}{
		{"new", ok(alert.New, "", hashA), ""},
		{"changed", ok(alert.Changed, hashA, hashB), ""},
		{"removed", ok(alert.Removed, hashA, ""), ""},
		{"empty url", alert.Alert{ID: alert.ID("", "", hashA), Kind: alert.New, NewHash: hashA}, "url is empty"},
		{"unknown kind", func() alert.Alert { a := ok(alert.New, "", hashA); a.Kind = "moved"; return a }(), `kind "moved"`},
		{"new without hash", ok(alert.New, "", ""), "without new_hash"},
		{"changed without old", ok(alert.Changed, "", hashB), "needs old_hash and new_hash"},
		{"changed same hash", ok(alert.Changed, hashA, hashA), "equal"},
		{"removed without old", ok(alert.Removed, "", ""), "without old_hash"},
		{"wrong id", func() alert.Alert { a := ok(alert.Changed, hashA, hashB); a.ID = "x"; return a }(), "is not alert.ID"},
		{"empty id", func() alert.Alert { a := ok(alert.Changed, hashA, hashB); a.ID = ""; return a }(), "is not alert.ID"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.a.Validate()
			if c.errHas == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, c.errHas)
			require.True(t, errors.Is(err, alert.ErrInvalid))
		})
	}
	for _, a := range sampleAlerts() {
		require.NoError(t, a.Validate(), a.Kind)
	}
}

func TestJSONFieldNamesAndRoundTrip(t *testing.T) {
	for _, a := range sampleAlerts() {
		raw, err := json.Marshal(a)
		require.NoError(t, err)
		var back alert.Alert
		require.NoError(t, json.Unmarshal(raw, &back))
		require.Equal(t, a, back)

		var fields map[string]any
		require.NoError(t, json.Unmarshal(raw, &fields))
		for _, name := range []string{"id", "kind", "source", "url", "old_hash", "new_hash", "detected_at"} {
			require.Contains(t, fields, name, "always present")
		}
	}
	raw, err := json.Marshal(sampleAlerts()[1])
	require.NoError(t, err)
	var fields map[string]any
	require.NoError(t, json.Unmarshal(raw, &fields))
	for _, name := range []string{"title", "changed", "removed", "diff", "record_ids"} {
		require.Contains(t, fields, name)
	}
	ch := fields["changed"].([]any)[0].(map[string]any)
	for _, name := range []string{"ordinal", "heading_path", "start", "end", "old_text", "new_text", "old_record_id", "new_record_id"} {
		require.Contains(t, ch, name)
	}
}
