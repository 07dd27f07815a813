package recrawl_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/fingerprint"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/internal/testsite"
)

// countingEmbedder counts the texts it embeds; short makes it return one
// vector too few.
type countingEmbedder struct {
	embed.Embedder
	calls, texts atomic.Int64
	short        atomic.Bool
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.calls.Add(1)
	c.texts.Add(int64(len(texts)))
	v, err := c.Embedder.Embed(ctx, texts)
	if err == nil && c.short.Load() && len(v) > 0 {
		v = v[:len(v)-1]
	}
	return v, err
}

// flakyIndex fails every Upsert while failing is set.
type flakyIndex struct {
	*index.Memory
	failing  atomic.Bool
	upserts  atomic.Int64
	failures atomic.Int64
}

func (f *flakyIndex) Upsert(ctx context.Context, recs []index.Record) error {
	f.upserts.Add(1)
	if f.failing.Load() {
		f.failures.Add(1)
		return errors.New("index unavailable")
	}
	return f.Memory.Upsert(ctx, recs)
}

// recordingSink keeps every delivery; failNext makes the next deliveries
// fail after the alert was received (an uncertain acknowledgement).
type recordingSink struct {
	mu       sync.Mutex
	got      []alert.Alert
	failNext int
}

func (s *recordingSink) Deliver(_ context.Context, a alert.Alert) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, a)
	if s.failNext > 0 {
		s.failNext--
		return errors.New("connection reset after the body was sent")
	}
	return nil
}

func (s *recordingSink) alerts() []alert.Alert {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]alert.Alert(nil), s.got...)
}

func (s *recordingSink) distinct() map[string]alert.Alert {
	m := map[string]alert.Alert{}
	for _, a := range s.alerts() {
		m[a.ID] = a
	}
	return m
}

type pipelineFixture struct {
	*fixture
	emb  *countingEmbedder
	idx  *flakyIndex
	sink *recordingSink
}

func newPipeline(t *testing.T, opts testsite.Options, mod func(*recrawl.Config)) *pipelineFixture {
	t.Helper()
	h, err := embed.NewHashing(64)
	require.NoError(t, err)
	emb := &countingEmbedder{Embedder: h}
	idx := &flakyIndex{Memory: index.NewMemory(64)}
	sink := &recordingSink{}
	cfg := recrawl.Config{Embedder: emb, Index: idx, Alerts: sink}
	if mod != nil {
		mod(&cfg)
	}
	return &pipelineFixture{fixture: newFixture(t, opts, cfg), emb: emb, idx: idx, sink: sink}
}

func (p *pipelineFixture) count() int {
	n, err := p.idx.Count(context.Background())
	require.NoError(p.t, err)
	return n
}

// sections is an article of n sections; section edit (if >= 0) is reworded.
func sections(n, edit int, word string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, "<h2>Section %d</h2>\n<p>Section %d explains part %d of the guide in plain words, long enough to be a chunk of its own.</p>\n", i, i, i)
		if i == edit {
			fmt.Fprintf(&b, "<p>This section now also mentions %s.</p>\n", word)
		}
	}
	return b.String()
}

func TestPipelineIndexesWithProvenance(t *testing.T) {
	p := newPipeline(t, testsite.Options{Pages: 3}, nil)
	rep := p.run()
	require.Equal(t, 3, rep.New)
	require.Positive(t, p.count())
	require.Empty(t, p.sink.alerts(), "a first run does not flood: AlertOnNew is off")
	require.Equal(t, rep.Stages[recrawl.StageIndex].Successes, 3)

	q, err := p.emb.Embed(context.Background(), []string{"func page2 return revision"})
	require.NoError(t, err)
	hits, err := p.idx.Query(context.Background(), q[0], 5, nil)
	require.NoError(t, err)
	require.NotEmpty(t, hits)
	for _, h := range hits {
		md := h.Metadata
		require.True(t, strings.HasPrefix(md["source_url"], p.site.URL()+"/docs/page-"), md["source_url"])
		for _, k := range []string{"original_url", "fetched_at", "content_hash", "chunk_ordinal", "heading_path", "char_start", "char_end", "chunker_version", "title"} {
			require.Contains(t, md, k)
		}
		row, err := p.state.Get(context.Background(), p.src.Name(), md["source_url"])
		require.NoError(t, err)
		require.Equal(t, row.ContentHash, md["content_hash"])
		require.Equal(t, recrawl.RecordID(md["source_url"], md["content_hash"], atoi(t, md["chunk_ordinal"])), h.ID)
	}
}

func atoi(t *testing.T, s string) int {
	var n int
	_, err := fmt.Sscan(s, &n)
	require.NoError(t, err)
	return n
}

func TestIndexFailureKeepsTheOldHashAndAlertsOnceAfterRecovery(t *testing.T) {
	p := newPipeline(t, testsite.Options{Pages: 2}, nil)
	path := p.site.Paths()[0]
	p.site.SetContent(path, sections(4, -1, ""))
	p.run()
	before := p.row(path)
	records := p.count()

	p.clk.Advance(time.Hour)
	p.site.SetContent(path, sections(4, 2, "a new install step"))
	p.idx.failing.Store(true)
	rep := p.run()
	require.Equal(t, 1, rep.Failed[recrawl.StageIndex])
	require.Equal(t, before.ContentHash, p.row(path).ContentHash, "the hash advances only after the index acknowledged")
	require.Equal(t, int64(3), p.idx.failures.Load(), "retried locally, StageAttempts times")
	require.Empty(t, p.sink.alerts())
	require.Equal(t, records, p.count())
	require.Contains(t, p.row(path).LastError, "index: ")

	// The index recovers: the next run after the backoff refetches and
	// alerts exactly once.
	p.idx.failing.Store(false)
	p.clk.Advance(recrawl.FailureBackoff)
	rep = p.run()
	require.Equal(t, 1, rep.Changed)
	require.NotEqual(t, before.ContentHash, p.row(path).ContentHash)
	got := p.sink.alerts()
	require.Len(t, got, 1)
	a := got[0]
	require.Equal(t, alert.Changed, a.Kind)
	require.Equal(t, alert.ID(p.site.PageURL(path), before.ContentHash, p.row(path).ContentHash), a.ID)
	require.Len(t, a.Changed, 1, "only the edited section's chunk changed")
	require.Contains(t, a.Changed[0].NewText, "a new install step")
	require.True(t, strings.HasSuffix(a.Changed[0].HeadingPath, "Section 2"), a.Changed[0].HeadingPath)
	require.Contains(t, a.Diff, "+This section now also mentions a new install step.")
	require.Equal(t, records, p.count(), "the old version's records were replaced, not added to")

	p.clk.Advance(30 * time.Hour)
	p.run()
	require.Len(t, p.sink.alerts(), 1, "a delivered alert is never sent again")
}

func TestShortEmbedderFailsAtEmbed(t *testing.T) {
	p := newPipeline(t, testsite.Options{Pages: 2}, nil)
	p.emb.short.Store(true)
	rep := p.run()
	require.Equal(t, 2, rep.Failed[recrawl.StageEmbed])
	require.Zero(t, p.count())
	row := p.row(p.site.Paths()[0])
	require.Empty(t, row.ContentHash)
	require.Contains(t, row.LastError, "embed: embedder returned")
}

func TestUncertainAcknowledgementRedeliversTheSameID(t *testing.T) {
	p := newPipeline(t, testsite.Options{Pages: 2}, func(c *recrawl.Config) { c.StageAttempts = 1 })
	p.run()
	path := p.site.Paths()[1]
	p.site.SetContent(path, sections(3, 1, "pricing"))
	p.sink.failNext = 1
	p.clk.Advance(time.Hour)
	rep := p.run()
	require.Equal(t, 1, rep.Changed)
	require.Equal(t, 1, rep.AlertsPending)
	require.Len(t, p.sink.alerts(), 1, "the sink received it but did not acknowledge")

	rep = p.run() // the next run delivers pending alerts first
	require.Equal(t, 1, rep.AlertsDelivered)
	got := p.sink.alerts()
	require.Len(t, got, 2)
	require.Equal(t, got[0].ID, got[1].ID, "a redelivery carries the same ID")
	require.Len(t, p.sink.distinct(), 1, "no second distinct alert")

	p.run()
	require.Len(t, p.sink.alerts(), 2, "acknowledged: never sent again")
}

// failingState fails Record (the commit) while failing is set: a crash
// between the index upsert and the commit.
type failingState struct {
	testStore
	failing atomic.Bool
}

func (s *failingState) Record(ctx context.Context, source string, results []crawlstate.Result) error {
	if s.failing.Load() {
		return errors.New("disk I/O error")
	}
	return s.testStore.Record(ctx, source, results)
}

func TestReplayAfterACrashWritesNoDuplicateRecords(t *testing.T) {
	p := newPipeline(t, testsite.Options{Pages: 4}, nil)
	fs := &failingState{testStore: p.state}
	eng, err := recrawl.New(recrawl.Config{State: fs, Clock: p.clk, Embedder: p.emb, Index: p.idx, Limits: limits(func(*recrawl.Limits) {})})
	require.NoError(t, err)
	fs.failing.Store(true)
	rep, err := eng.Run(context.Background(), p.src)
	require.NoError(t, err)
	require.Equal(t, 4, rep.Failed[recrawl.StageCommit])
	written := p.count()
	require.Positive(t, written, "records were upserted before the commit failed")

	fs.failing.Store(false)
	p.clk.Advance(recrawl.FailureBackoff)
	rep, err = eng.Run(context.Background(), p.src)
	require.NoError(t, err)
	require.Equal(t, 4, rep.New)
	require.Equal(t, written, p.count(), "the replay overwrote the same record IDs")
}

func TestGonePageLeavesNoRecords(t *testing.T) {
	p := newPipeline(t, testsite.Options{Pages: 3}, nil)
	p.run()
	path := p.site.Paths()[0]
	chunks, err := p.state.Chunks(context.Background(), p.src.Name(), p.site.PageURL(path))
	require.NoError(t, err)
	require.NotEmpty(t, chunks)
	before := p.count()
	p.site.Delete(path, http.StatusGone)
	p.clk.Advance(25 * time.Hour)
	rep := p.run()
	require.Equal(t, 1, rep.Gone)
	require.Equal(t, before-len(chunks), p.count())
	hits, err := p.idx.DeleteWhere(context.Background(), index.Filter{"source_url": p.site.PageURL(path)})
	require.NoError(t, err)
	require.Zero(t, hits, "no record of the gone page is left")
	got := p.sink.alerts()
	require.Len(t, got, 1)
	require.Equal(t, alert.Removed, got[0].Kind)
	require.Len(t, got[0].Removed, len(chunks))
}

func TestUnchangedChunksAreNotEmbeddedAgain(t *testing.T) {
	p := newPipeline(t, testsite.Options{Pages: 1}, nil)
	path := p.site.Paths()[0]
	p.site.SetContent(path, sections(12, -1, ""))
	rep := p.run()
	first := p.emb.texts.Load()
	require.Equal(t, int(first), rep.VectorsEmbedded)

	p.site.SetContent(path, sections(12, 7, "a changed default"))
	p.clk.Advance(time.Hour)
	rep = p.run()
	require.Equal(t, 1, rep.Changed)
	require.Equal(t, int64(1), p.emb.texts.Load()-first, "only the edited chunk's text is embedded")
	require.Equal(t, 1, rep.VectorsEmbedded)
	require.Positive(t, rep.VectorsReused)
}

func TestAlertOnNewAndExplain(t *testing.T) {
	p := newPipeline(t, testsite.Options{Pages: 2}, func(c *recrawl.Config) { c.AlertOnNew = true })
	p.run()
	got := p.sink.alerts()
	require.Len(t, got, 2)
	for _, a := range got {
		require.Equal(t, alert.New, a.Kind)
		require.Empty(t, a.OldHash)
		require.NotEmpty(t, a.RecordIDs)
	}
	path := p.site.Paths()[0]
	p.site.SetContent(path, sections(3, 0, "a breaking change"))
	p.clk.Advance(time.Hour)
	p.run()
	got = p.sink.alerts()
	require.Len(t, got, 3)
	changed := got[2]
	require.Equal(t, alert.Changed, changed.Kind)

	x, err := p.eng.Explain(context.Background(), changed.ID)
	require.NoError(t, err)
	require.Equal(t, changed.ID, x.Alert.ID)
	require.False(t, x.Delivered.IsZero())
	require.Equal(t, p.site.PageURL(path), x.Page.URL)
	require.Equal(t, changed.NewHash, x.Page.ContentHash)
	require.Equal(t, changed.RecordIDs, x.RecordIDs)
	var stages []string
	for _, ev := range x.Events {
		stages = append(stages, ev.Stage)
	}
	for _, s := range []string{"fetch", "extract", "chunk", "embed", "index", "commit", "alert"} {
		require.Contains(t, stages, s)
	}
	_, err = p.eng.Explain(context.Background(), "no-such-alert")
	require.ErrorIs(t, err, recrawl.ErrUnknownAlert)
}

func TestDeadLetters(t *testing.T) {
	p := newPipeline(t, testsite.Options{Pages: 2}, func(c *recrawl.Config) { c.DeadLetterAfter = 2 })
	path := p.site.Paths()[0]
	p.site.Fail(path, http.StatusInternalServerError, 1000, "")
	p.run()
	dl, err := p.eng.DeadLetters(context.Background(), p.src.Name())
	require.NoError(t, err)
	require.Empty(t, dl)
	require.Zero(t, p.run().Due, "a failed page is not due again at once")
	p.clk.Advance(recrawl.FailureBackoff)
	p.run()
	dl, err = p.eng.DeadLetters(context.Background(), p.src.Name())
	require.NoError(t, err)
	require.Len(t, dl, 1)
	require.Equal(t, p.site.PageURL(path), dl[0].URL)
	require.Equal(t, recrawl.StageFetch, dl[0].Stage)
	require.Equal(t, 2, dl[0].Attempts)
	require.Contains(t, dl[0].LastError, "500")

	// The second failure doubled the backoff; the run after it retries
	// the page, and success clears the dead letter.
	p.site.Fail(path, http.StatusInternalServerError, 0, "")
	p.clk.Advance(recrawl.FailureBackoff)
	require.Zero(t, p.run().Due, "a dead letter backs off too")
	p.clk.Advance(recrawl.FailureBackoff)
	rep := p.run()
	require.Equal(t, 1, rep.New)
	dl, err = p.eng.DeadLetters(context.Background(), p.src.Name())
	require.NoError(t, err)
	require.Empty(t, dl)
}

func TestOnContentRunsBeforeTheCommit(t *testing.T) {
	var mu sync.Mutex
	got := map[string]recrawl.Content{}
	failing := atomic.Bool{}
	f := newFixture(t, testsite.Options{Pages: 3}, recrawl.Config{StageAttempts: 2, OnContent: func(_ context.Context, c recrawl.Content) error {
		if failing.Load() {
			return errors.New("disk full")
		}
		mu.Lock()
		got[c.URL] = c
		mu.Unlock()
		return nil
	}})
	rep := f.run()
	require.Equal(t, 3, rep.New)
	require.Len(t, got, 3)
	first := f.site.PageURL(f.site.Paths()[0])
	c := got[first]
	require.Equal(t, recrawl.OutcomeNew, c.Outcome)
	require.Equal(t, "Page 1", c.Title)
	require.Contains(t, c.ContentType, "text/html")
	require.Equal(t, f.row(f.site.Paths()[0]).ContentHash, c.Hash)
	require.Equal(t, fingerprint.Set{}.For(first).Of(c.Markdown), c.Hash, "the Markdown is exactly what was fingerprinted")

	// A failing host stage keeps the old hash; the next run hands it over again.
	f.site.Edit(f.site.Paths()[0])
	f.site.Delete(f.site.Paths()[1], http.StatusNotFound)
	f.clk.Advance(25 * time.Hour)
	failing.Store(true)
	before := f.row(f.site.Paths()[0]).ContentHash
	rep = f.run()
	require.Equal(t, 2, rep.Failed[recrawl.StageContent])
	require.Equal(t, before, f.row(f.site.Paths()[0]).ContentHash)
	require.False(t, f.row(f.site.Paths()[1]).Gone)

	failing.Store(false)
	f.clk.Advance(recrawl.FailureBackoff)
	rep = f.run()
	require.Equal(t, 1, rep.Changed)
	require.Equal(t, 1, rep.Gone)
	require.Equal(t, recrawl.OutcomeChanged, got[first].Outcome)
	require.Equal(t, before, got[first].OldHash)
	gone := got[f.site.PageURL(f.site.Paths()[1])]
	require.Equal(t, recrawl.OutcomeGone, gone.Outcome)
	require.Empty(t, gone.Markdown)
}
