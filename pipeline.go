package recrawl

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/chunk"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/internal/retry"
)

// Pipeline stages, as named in failures, stage counts and events.
const (
	StageChunk = "chunk"
	StageEmbed = "embed"
	StageIndex = "index"
	StageAlert = "alert"
	// StageContent is Config.OnContent.
	StageContent = "content"
)

// pipeline reports whether pages are chunked: for the index, or for
// alerts that name the changed chunks.
func (e *Engine) pipeline() bool {
	return e.cfg.Index != nil || e.cfg.Alerts != nil
}

// RecordID is the ID of the index record of one chunk: the hex SHA-256 of
// the canonical URL, the document's content hash and the chunk ordinal,
// NUL-separated. A replay of the same version overwrites the same records.
func RecordID(canonicalURL, contentHash string, ordinal int) string {
	sum := sha256.Sum256([]byte(canonicalURL + "\x00" + contentHash + "\x00" + strconv.Itoa(ordinal)))
	return hex.EncodeToString(sum[:])
}

// chunkDiff is how a page's chunks changed between two versions.
type chunkDiff struct {
	added, removed, changed []alert.ChunkChange
	oldText, newText        string // the text of the chunks that differ, for the unified diff
}

// missingChunks reports an unchanged page that was never chunked (the
// pipeline was configured after it was stored): it is indexed now.
func (p *pageRun) missingChunks(ctx context.Context) bool {
	if p.r.e.cfg.Index == nil {
		return false
	}
	old, err := p.r.e.st.Chunks(ctx, p.r.source, p.row.URL)
	// An unreadable chunk list is indexed again: index reads it once
	// more and fails the page at the chunk stage if it still cannot.
	return err != nil || len(old) == 0
}

// index chunks the page, embeds the chunks whose text has no cached
// vector, upserts the new version's records, and deletes the previous
// version's. It returns the chunk list to commit and how it changed.
func (p *pageRun) index(ctx context.Context, markdown, hash, title string) ([]crawlstate.Chunk, chunkDiff, bool) {
	r, e := p.r, p.r.e
	st := e.st
	r.stage(StageChunk, 0)
	split := chunk.Split(markdown, e.cfg.Chunking)
	if len(split) == 0 {
		r.stage(StageChunk, -1)
		p.fail(ctx, StageExtract, fmt.Errorf("%w: no chunk of text", errEmptyChunks))
		return nil, chunkDiff{}, false
	}
	r.stage(StageChunk, 1)
	old, err := st.Chunks(ctx, r.source, p.row.URL)
	if err != nil {
		p.fail(ctx, StageChunk, err)
		return nil, chunkDiff{}, false
	}
	chunks := make([]crawlstate.Chunk, len(split))
	for i, c := range split {
		chunks[i] = crawlstate.Chunk{
			Ordinal: c.Ordinal, TextHash: c.TextHash, HeadingPath: c.HeadingPath(),
			Start: c.Start, End: c.End, Text: c.Text,
		}
		if e.cfg.Index != nil {
			chunks[i].RecordID = RecordID(p.row.URL, hash, c.Ordinal)
		}
	}
	p.event(StageChunk, true, "", strconv.Itoa(len(chunks))+" chunks, "+chunk.Version(e.cfg.Chunking))
	if e.cfg.Index != nil {
		vectors, ok := p.embed(ctx, chunks)
		if !ok {
			return nil, chunkDiff{}, false
		}
		orphans, ok := p.upsert(ctx, chunks, vectors, hash, title)
		if !ok {
			return nil, chunkDiff{}, false
		}
		var stale []string
		fresh := map[string]bool{}
		for _, c := range chunks {
			fresh[c.RecordID] = true
		}
		for _, c := range old {
			if c.RecordID != "" && !fresh[c.RecordID] {
				stale = append(stale, c.RecordID)
				fresh[c.RecordID] = true // listed once
			}
		}
		for _, id := range orphans {
			if !fresh[id] {
				stale = append(stale, id)
			}
		}
		if len(stale) > 0 && !p.retry(ctx, StageIndex, "delete "+strconv.Itoa(len(stale))+" stale records", func() error {
			return e.cfg.Index.Delete(ctx, stale)
		}) {
			return nil, chunkDiff{}, false
		}
	}
	return chunks, diffChunks(old, chunks), true
}

// embed returns one vector per chunk: cached vectors of unchanged chunk
// text are reused; only new text is sent to the embedder.
func (p *pageRun) embed(ctx context.Context, chunks []crawlstate.Chunk) ([][]float32, bool) {
	r, e := p.r, p.r.e
	model := e.cfg.Embedder.Model() + "/" + strconv.Itoa(e.cfg.Embedder.Dimensions())
	hashes := make([]string, len(chunks))
	for i, c := range chunks {
		hashes[i] = c.TextHash
	}
	cached, err := e.st.Vectors(ctx, model, hashes)
	if err != nil {
		cached = nil
		r.log.WarnContext(ctx, "reading cached vectors failed; embedding everything", "err", err)
	}
	var texts []string
	var todo []int
	seen := map[string]bool{}
	for i, c := range chunks {
		if _, ok := cached[c.TextHash]; ok || seen[c.TextHash] {
			continue
		}
		seen[c.TextHash] = true
		todo = append(todo, i)
		texts = append(texts, c.Text)
	}
	r.tally.add(func(rep *Report) {
		rep.VectorsReused += len(chunks) - len(todo)
	})
	if len(texts) > 0 {
		var got [][]float32
		if !p.retry(ctx, StageEmbed, strconv.Itoa(len(texts))+" texts", func() error {
			v, err := e.cfg.Embedder.Embed(ctx, texts)
			if err != nil {
				return err
			}
			if len(v) != len(texts) {
				return fmt.Errorf("embedder returned %d vectors for %d texts", len(v), len(texts))
			}
			for _, vec := range v {
				if len(vec) != e.cfg.Embedder.Dimensions() {
					return fmt.Errorf("embedder returned a vector of %d dimensions, want %d", len(vec), e.cfg.Embedder.Dimensions())
				}
			}
			got = v
			return nil
		}) {
			return nil, false
		}
		fresh := make(map[string][]float32, len(todo))
		for k, i := range todo {
			fresh[chunks[i].TextHash] = got[k]
		}
		if err := e.st.PutVectors(ctx, model, fresh); err != nil {
			r.log.WarnContext(ctx, "caching vectors failed", "err", err)
			r.tally.add(func(rep *Report) { rep.StateWriteFailures.Vectors++ })
		}
		if cached == nil {
			cached = map[string][]float32{}
		}
		for h, v := range fresh {
			cached[h] = v
		}
		r.tally.add(func(rep *Report) {
			rep.VectorsEmbedded += len(texts)
		})
	}
	out := make([][]float32, len(chunks))
	for i, c := range chunks {
		out[i] = cached[c.TextHash]
	}
	return out, true
}

// upsert writes the records of the page's new version, with provenance,
// and returns the IDs of the page's other records in the index: those of
// the stored version, and of versions a crash left written but never
// committed (in no stored chunk list), which the caller deletes.
func (p *pageRun) upsert(ctx context.Context, chunks []crawlstate.Chunk, vectors [][]float32, hash, title string) ([]string, bool) {
	e := p.r.e
	fetched := p.now.UTC().Format(time.RFC3339)
	version := chunk.Version(e.cfg.Chunking)
	records := make([]index.Record, len(chunks))
	for i, c := range chunks {
		records[i] = index.Record{
			ID:     c.RecordID,
			Vector: vectors[i],
			Text:   c.Text,
			Metadata: map[string]string{
				"source":          p.r.source,
				"source_url":      p.row.URL,
				"original_url":    p.row.OriginalURL,
				"fetched_at":      fetched,
				"content_hash":    hash,
				"chunk_ordinal":   strconv.Itoa(c.Ordinal),
				"heading_path":    c.HeadingPath,
				"char_start":      strconv.Itoa(c.Start),
				"char_end":        strconv.Itoa(c.End),
				"chunker_version": version,
				"title":           title,
			},
		}
	}
	fresh := make(map[string]bool, len(records))
	for _, r := range records {
		fresh[r.ID] = true
	}
	var others []string
	ok := p.retry(ctx, StageIndex, "upsert "+strconv.Itoa(len(records))+" records", func() error {
		if err := e.cfg.Index.Upsert(ctx, records); err != nil {
			return err
		}
		ids, _, err := listRecords(ctx, e.cfg.Index, vectors[0], len(records)+maxOrphans, index.Filter{"source": p.r.source, "source_url": p.row.URL})
		if err != nil {
			return fmt.Errorf("listing the page's records: %w", err)
		}
		others = others[:0]
		for _, id := range ids {
			if !fresh[id] {
				others = append(others, id)
			}
		}
		return nil
	})
	return others, ok
}

// deleteRecords removes every record of the page's stored version.
func (p *pageRun) deleteRecords(ctx context.Context) bool {
	e := p.r.e
	old, err := e.st.Chunks(ctx, p.r.source, p.row.URL)
	if err != nil {
		p.fail(ctx, StageIndex, err)
		return false
	}
	var ids []string
	for _, c := range old {
		if c.RecordID != "" {
			ids = append(ids, c.RecordID)
		}
	}
	if len(ids) > 0 && !p.retry(ctx, StageIndex, "delete "+strconv.Itoa(len(ids))+" records", func() error {
		return e.cfg.Index.Delete(ctx, ids)
	}) {
		return false
	}
	// Records of versions a crash left uncommitted are in no chunk list.
	filter := index.Filter{"source": p.r.source, "source_url": p.row.URL}
	if wd, ok := e.cfg.Index.(whereDeleter); ok {
		return p.retry(ctx, StageIndex, "delete the page's other records", func() error {
			_, err := wd.DeleteWhere(ctx, filter)
			return err
		})
	}
	// Without DeleteWhere: list (a zero vector serves a Query) and delete.
	zero := make([]float32, e.cfg.Embedder.Dimensions())
	return p.retry(ctx, StageIndex, "delete the page's other records", func() error {
		ids, ok, err := listRecords(ctx, e.cfg.Index, zero, maxOrphans, filter)
		if err != nil || !ok || len(ids) == 0 {
			return err
		}
		return e.cfg.Index.Delete(ctx, ids)
	})
}

// querier and whereDeleter are the abilities of index.Index beyond
// index.Writer that the engine uses when Config.Index has them.
type (
	querier interface {
		Query(ctx context.Context, vector []float32, k int, filter index.Filter) ([]index.Hit, error)
	}
	whereDeleter interface {
		DeleteWhere(ctx context.Context, filter index.Filter) (int, error)
	}
)

// listRecords returns the IDs of up to limit records of idx matching
// filter: through index.Lister when idx has it (no vectors, metadata or
// texts copied), else with a query for vector. ok is false when idx can do
// neither: its records cannot be listed.
func listRecords(ctx context.Context, idx index.Writer, vector []float32, limit int, filter index.Filter) (ids []string, ok bool, err error) {
	if l, ok := idx.(index.Lister); ok {
		ids, err := l.IDs(ctx, filter, limit)
		return ids, true, err
	}
	q, ok := idx.(querier)
	if !ok {
		return nil, false, nil
	}
	hits, err := q.Query(ctx, vector, limit, filter)
	if err != nil {
		return nil, true, err
	}
	ids = make([]string, len(hits))
	for i, h := range hits {
		ids[i] = h.ID
	}
	return ids, true, nil
}

// maxOrphans bounds how many records of uncommitted versions of one page
// one index stage looks for beyond its stored and new chunks.
const maxOrphans = 256

// retry runs one stage with up to StageAttempts attempts, waiting a capped
// exponential backoff (or the error's RetryAfter) between them. A failure
// after the last attempt is recorded at that stage and the page stays due.
func (p *pageRun) retry(ctx context.Context, stage, detail string, fn func() error) bool {
	r, e := p.r, p.r.e
	var err error
	for attempt := 1; attempt <= e.cfg.StageAttempts; attempt++ {
		r.stage(stage, 0)
		if err = fn(); err == nil {
			r.stage(stage, 1)
			p.event(stage, true, "", detail)
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		if attempt == e.cfg.StageAttempts {
			break
		}
		r.stage(stage, -1)
		p.event(stage, false, err.Error(), detail)
		wait := retry.Exp(attempt-1, time.Second, 30*time.Second)
		var ra interface{ RetryAfter() time.Duration }
		if errors.As(err, &ra) && ra.RetryAfter() > 0 {
			wait = min(ra.RetryAfter(), 2*time.Minute)
		}
		if clock.Sleep(ctx, e.cfg.Clock, wait) != nil {
			return false
		}
	}
	p.fail(ctx, stage, err)
	return false
}

// diffChunks compares two versions' chunk lists. Chunks with the same text
// are unchanged; of the rest, chunks under the same heading path pair up
// as changed, the others are added or removed.
func diffChunks(old, cur []crawlstate.Chunk) chunkDiff {
	var d chunkDiff
	oldByHash := map[string]int{}
	for _, c := range old {
		oldByHash[c.TextHash]++
	}
	curByHash := map[string]int{}
	for _, c := range cur {
		curByHash[c.TextHash]++
	}
	var gone []crawlstate.Chunk
	for _, c := range old {
		if curByHash[c.TextHash] > 0 {
			curByHash[c.TextHash]--
			continue
		}
		gone = append(gone, c)
	}
	byPath := map[string][]int{}
	for i, c := range gone {
		byPath[c.HeadingPath] = append(byPath[c.HeadingPath], i)
	}
	used := make([]bool, len(gone))
	var oldText, newText []byte
	for _, c := range cur {
		if oldByHash[c.TextHash] > 0 {
			oldByHash[c.TextHash]--
			continue
		}
		newText = append(append(newText, c.Text...), "\n\n"...)
		if q := byPath[c.HeadingPath]; len(q) > 0 {
			o := gone[q[0]]
			byPath[c.HeadingPath] = q[1:]
			used[q[0]] = true
			oldText = append(append(oldText, o.Text...), "\n\n"...)
			d.changed = append(d.changed, alert.ChunkChange{
				Ordinal: c.Ordinal, HeadingPath: c.HeadingPath, Start: c.Start, End: c.End,
				OldText: o.Text, NewText: c.Text, OldRecordID: o.RecordID, NewRecordID: c.RecordID,
			})
			continue
		}
		d.added = append(d.added, alert.ChunkChange{Ordinal: c.Ordinal, HeadingPath: c.HeadingPath, Start: c.Start, End: c.End, NewText: c.Text, NewRecordID: c.RecordID})
	}
	for i, o := range gone {
		if used[i] {
			continue
		}
		oldText = append(append(oldText, o.Text...), "\n\n"...)
		d.removed = append(d.removed, alert.ChunkChange{Ordinal: o.Ordinal, HeadingPath: o.HeadingPath, Start: o.Start, End: o.End, OldText: o.Text, OldRecordID: o.RecordID})
	}
	d.oldText, d.newText = string(oldText), string(newText)
	return d
}
