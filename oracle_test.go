package recrawl_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/statetest"
	"github.com/recrawl/recrawl/discover"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/internal/testsite"
	"github.com/recrawl/recrawl/schedule"
)

// The crash test and the fault soak share this oracle: after the engine
// went through kills or faults, one clean run must leave state, index and
// alerts exactly where a fresh crawl of the site's true state puts them.

// logIndex is an index.Index whose writes are appended to a file before
// they return, so the records survive the death of the process that wrote
// them (a SIGKILL loses nothing write(2) accepted). Reads are served from
// memory.
type logIndex struct {
	*index.Memory
	mu sync.Mutex
	f  *os.File
}

type indexOp struct {
	Op      string         `json:"op"` // "upsert" or "delete"
	IDs     []string       `json:"ids,omitempty"`
	Records []index.Record `json:"records,omitempty"`
}

// openLogIndex opens (or creates) the log at path and loads the records
// it holds, as a restarted process finds its index.
func openLogIndex(t testing.TB, path string) *logIndex {
	x := &logIndex{Memory: index.NewMemory(oracleDims)}
	var live []index.Record
	for _, r := range replayRecords(t, path) {
		live = append(live, r)
	}
	if len(live) > 0 {
		require.NoError(t, x.Memory.Upsert(context.Background(), live))
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	require.NoError(t, err)
	x.f = f
	return x
}

func (x *logIndex) write(op indexOp) error {
	b, err := json.Marshal(op)
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	_, err = x.f.Write(append(b, '\n'))
	return err
}

func (x *logIndex) Upsert(ctx context.Context, records []index.Record) error {
	if err := x.Memory.Upsert(ctx, records); err != nil {
		return err
	}
	return x.write(indexOp{Op: "upsert", Records: records})
}

func (x *logIndex) DeleteWhere(ctx context.Context, f index.Filter) (int, error) {
	hits, err := x.Memory.Query(ctx, make([]float32, oracleDims), 1<<20, f)
	if err != nil {
		return 0, err
	}
	ids := make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	if len(ids) == 0 {
		return 0, nil
	}
	return len(ids), x.Delete(ctx, ids)
}

func (x *logIndex) Delete(ctx context.Context, ids []string) error {
	if err := x.Memory.Delete(ctx, ids); err != nil {
		return err
	}
	return x.write(indexOp{Op: "delete", IDs: ids})
}

// record is what the oracle knows of an index record.
type record struct{ URL, Hash string }

// replayIndex rebuilds an index's records from its log. A torn last line
// (the writer died inside write) is a write that never returned: ignored.
func replayIndex(t testing.TB, path string) map[string]record {
	out := map[string]record{}
	for id, r := range replayRecords(t, path) {
		out[id] = record{URL: r.Metadata["source_url"], Hash: r.Metadata["content_hash"]}
	}
	return out
}

func replayRecords(t testing.TB, path string) map[string]index.Record {
	out := map[string]index.Record{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return out
	}
	require.NoError(t, err)
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var op indexOp
		if line := sc.Bytes(); json.Unmarshal(line, &op) != nil {
			// A torn line (its writer died inside write) with the next
			// process's first line appended.
			i := bytes.LastIndex(line, []byte(`{"op":`))
			if i <= 0 || json.Unmarshal(line[i:], &op) != nil {
				continue
			}
		}
		for _, id := range op.IDs {
			delete(out, id)
		}
		for _, r := range op.Records {
			out[r.ID] = r
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// readAlerts reads an alert.JSONL file; a torn line is skipped, an alert
// glued to one is an error.
func readAlerts(t testing.TB, path string) []alert.Alert {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	defer f.Close()
	var out []alert.Alert
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		line := sc.Bytes()
		var a alert.Alert
		if json.Unmarshal(line, &a) != nil {
			// A process killed inside a write left a torn line without its
			// newline. The next process's sink starts on a fresh line
			// (alert.JSONL repairs the file), so no alert is ever glued
			// to a torn line: the torn line is skipped, and nothing else.
			if i := bytes.LastIndex(line, []byte(`{"id":`)); i > 0 && json.Unmarshal(line[i:], &a) == nil {
				t.Errorf("an alert was appended to a torn line of %s: %.160q", path, line)
			}
			continue
		}
		if a.ID != "" {
			out = append(out, a)
		}
	}
	require.NoError(t, sc.Err())
	return out
}

const oracleDims = 32

// oracleConfig is the engine configuration of the crash and soak runs.
func oracleConfig(t testing.TB, st crawlstate.State, clk clock.Clock, idx index.Index, sink alert.Sink) recrawl.Config {
	h, err := embed.NewHashing(oracleDims)
	require.NoError(t, err)
	l := recrawl.DefaultLimits()
	l.RequestDelay = 0
	l.MaxPages = 0
	return recrawl.Config{
		State: st, Clock: clk, Limits: &l, Workers: 4,
		Embedder: h, Index: idx, Alerts: sink, AlertOnNew: true,
		Scheduler: schedule.DefaultHalving,
	}
}

// verdict is what the oracle counted.
type verdict struct {
	Live, Gone       int // pages checked
	Records          int // index records, all current
	Transitions      int // distinct alerts, one per real transition
	Redeliveries     int // extra deliveries of an alert already delivered (same ID)
	Lost, Duplicated int // both must be 0
}

// checkOracle compares the engine's state, index records and delivered
// alerts after a clean run at now with a fresh crawl of the site's true
// state at the same time.
func checkOracle(t testing.TB, site *testsite.Site, src discover.Source, st statetest.Full, records map[string]record, alerts []alert.Alert, now time.Time) verdict {
	t.Helper()
	ctx := context.Background()
	refState := openState(t, filepath.Join(t.TempDir(), "reference.sqlite"))
	defer refState.Close()
	refIdx := openLogIndex(t, filepath.Join(t.TempDir(), "reference.index"))
	defer refIdx.f.Close()
	eng, err := recrawl.New(oracleConfig(t, refState, clock.NewAutoFake(now), refIdx, nil))
	require.NoError(t, err)
	_, err = eng.Run(ctx, src)
	require.NoError(t, err, "the reference crawl")
	refRecords := replayIndex(t, refIdx.f.Name())

	var v verdict
	byURL := map[string][]alert.Alert{}
	seen := map[string]bool{}
	for _, a := range alerts {
		if seen[a.ID] {
			v.Redeliveries++
			continue
		}
		seen[a.ID] = true
		byURL[a.URL] = append(byURL[a.URL], a)
	}
	live := map[string]bool{}
	for _, path := range site.Paths() {
		u := site.PageURL(path)
		ref, err := refState.Get(ctx, src.Name(), u)
		require.NoError(t, err, u)
		row, err := st.Get(ctx, src.Name(), u)
		require.NoError(t, err, u)
		// A tombstone's stored hash is the last version seen, which a
		// fresh crawl never saw: only live pages compare hashes.
		if row.Gone != ref.Gone || (!ref.Gone && row.ContentHash != ref.ContentHash) {
			v.Lost++
			t.Errorf("%s: hash %q gone %v, the site's true state is hash %q gone %v", u, row.ContentHash, row.Gone, ref.ContentHash, ref.Gone)
		}
		p, _ := site.Page(path)
		if p.Status == http.StatusNotFound || p.Status == http.StatusGone {
			v.Gone++
			require.True(t, row.Gone, "%s is a tombstone", u)
			chunks, err := st.Chunks(ctx, src.Name(), u)
			require.NoError(t, err)
			require.Empty(t, chunks, "%s: a tombstone has no chunks", u)
		} else {
			v.Live++
			live[u] = true
		}
		// The alerts of the page form one chain of transitions from its
		// first sighting to its current version: none missing (no gap),
		// none duplicated (no fork).
		next := map[string]alert.Alert{}
		for _, a := range byURL[u] {
			if _, dup := next[a.OldHash]; dup {
				v.Duplicated++
				t.Errorf("%s: two alerts from hash %q", u, a.OldHash)
			}
			next[a.OldHash] = a
		}
		want := row.ContentHash
		if row.Gone {
			want = ""
		}
		at, steps := "", 0
		for steps < len(next) {
			a, ok := next[at]
			if !ok {
				break
			}
			at, steps = a.NewHash, steps+1
		}
		if steps != len(next) || at != want {
			v.Lost++
			stored, err := st.Alert(ctx, alert.ID(u, at, want))
			t.Errorf("%s: alert chain ends at %q after %d of %d alerts, want %q; the state's alert for the gap: %+v, %v; row %+v",
				u, at, steps, len(next), want, stored, err, row)
		}
		v.Transitions += len(next)
	}
	// The index holds exactly the current records.
	for id, r := range records {
		if _, ok := refRecords[id]; !ok {
			v.Duplicated++
			t.Errorf("index record %s of %s (hash %s) is not current", id, r.URL, r.Hash)
		}
		if !live[r.URL] {
			t.Errorf("index record %s belongs to %s, which is not live", id, r.URL)
		}
	}
	for id, r := range refRecords {
		if _, ok := records[id]; !ok {
			v.Lost++
			t.Errorf("index record %s of %s (hash %s) is missing", id, r.URL, r.Hash)
		}
	}
	v.Records = len(records)
	return v
}

// sortedKeys is for stable logs.
func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
