//go:build cgo && sqlite_fts5

package sqlitevec

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	vec "github.com/asg017/sqlite-vec-go-bindings/cgo"
	"github.com/mattn/go-sqlite3"

	"github.com/recrawl/recrawl/index"
)

// Index is an index.Index in a SQLite file (see the package
// documentation for its tables).
//
// Query is exact while the records that match its filter are at most
// ExactLimit: it scores each of them. Past that it asks sqlite-vec for the
// Options.Candidates × k records whose binary signatures (see signer) are
// nearest the query's, a scan of 64 bytes per record for 384 dimensions,
// and ranks those by their exact cosine: recall@10 against exact search
// on the bench site's chunks is pinned by TestRecall (see BENCHMARKS.md
// for the figures). A k whose candidates would exceed sqlite-vec's limit
// of 4,096 scores every matching record.
//
// Writes go through one connection, in one transaction per call (each
// call applies fully or not at all) begun IMMEDIATE, so the index waits
// for a state writer on the same file, and the state for it, up to
// Options.BusyTimeout, instead of failing; queries use a pool of
// read-only connections that see the last committed write. An Index is
// safe for concurrent use, and several (in several processes) may open
// one file.
type Index struct {
	w, r  *sql.DB // r == w for ":memory:"
	path  string
	opts  Options
	log   *slog.Logger
	dims  atomic.Int64
	sigMu sync.Mutex
	sig   *signer
}

var (
	_ index.Index  = (*Index)(nil)
	_ index.Lister = (*Index)(nil)
)

// ExactLimit is how many matching records Query scores one by one before
// it searches by signature first.
const ExactLimit = 4096

// vecMaxK is the largest k sqlite-vec's KNN query accepts.
const vecMaxK = 4096

// schemaVersion is the version of the tables this build writes.
const schemaVersion = 1

// recrawlApplicationID is crawlstate/sqlite's application_id ("rcrw").
// Open stamps it on a file it creates, so the state accepts the file
// afterwards: the state refuses a file that holds tables but no mark.
const recrawlApplicationID = 0x72637277

// readerDriver is go-sqlite3 with every reading connection mapping the
// file into memory, so the coarse scan and the reranking reads are memory
// reads instead of a system call per page.
const readerDriver = "sqlitevec-reader"

// readerMmapBytes bounds a reading connection's memory map (SQLite's
// largest): address space backed by the operating system's file cache.
const readerMmapBytes = 0x7fff0000

func init() {
	sql.Register(readerDriver, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		_, err := c.Exec("PRAGMA mmap_size = "+strconv.Itoa(readerMmapBytes), nil)
		return err
	}})
}

var autoOnce sync.Once

// Open opens the index in the SQLite file at path, creating the file and
// the index's tables when missing; ":memory:" opens a private in-memory
// index. The file may be the state file of crawlstate/sqlite, opened
// before or after: a new file is stamped as a recrawl file, so the state
// accepts it. Close releases it.
//
// It returns an error for a file whose index has other dimensions than
// Options.Dimensions, or was written by a newer build.
func Open(ctx context.Context, path string, opts Options) (*Index, error) {
	if path == "" {
		return nil, errors.New(`sqlitevec: open: empty path; pass a file path or ":memory:"`)
	}
	switch {
	case opts.Dimensions < 0:
		return nil, fmt.Errorf("sqlitevec: open %s: %d dimensions; pass 0 (fixed by the first record) or more", path, opts.Dimensions)
	case opts.BusyTimeout < 0:
		return nil, fmt.Errorf("sqlitevec: open %s: busy timeout %v is negative", path, opts.BusyTimeout)
	case opts.ReadConns < 0:
		return nil, fmt.Errorf("sqlitevec: open %s: %d read connections; pass 0 (the default, 4) or more", path, opts.ReadConns)
	case opts.Candidates < 0:
		return nil, fmt.Errorf("sqlitevec: open %s: %d candidates per hit; pass 0 (the default, 8) or more", path, opts.Candidates)
	}
	if opts.BusyTimeout == 0 {
		opts.BusyTimeout = DefaultBusyTimeout
	}
	if opts.ReadConns == 0 {
		opts.ReadConns = 4
	}
	if opts.Candidates == 0 {
		opts.Candidates = 8
	}
	x := &Index{path: path, opts: opts, log: opts.Logger}
	if x.log == nil {
		x.log = slog.New(slog.DiscardHandler)
	}
	autoOnce.Do(vec.Auto) // sqlite-vec in every connection of the process

	params := url.Values{}
	params.Set("_busy_timeout", strconv.FormatInt(opts.BusyTimeout.Milliseconds(), 10))
	params.Set("_txlock", "immediate")
	// go-sqlite3 keeps this many prepared statements per connection: a
	// write or a query runs a handful, many times over.
	params.Set("_stmt_cache_size", "32")
	memory := path == ":memory:"
	if !memory {
		params.Set("_synchronous", "NORMAL")
	}
	w, err := sql.Open("sqlite3", dsn(path, params))
	if err != nil {
		return nil, fmt.Errorf("sqlitevec: open %s: %w", path, err)
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxLifetime(0)
	w.SetConnMaxIdleTime(0)
	x.w, x.r = w, w
	if err := x.setup(ctx, memory); err != nil {
		_ = w.Close()
		return nil, err
	}
	if memory {
		return x, nil
	}
	params.Del("_txlock")
	params.Set("_query_only", "true")
	r, err := sql.Open(readerDriver, dsn(path, params))
	if err != nil {
		_ = w.Close()
		return nil, fmt.Errorf("sqlitevec: open %s for reading: %w", path, err)
	}
	r.SetMaxOpenConns(opts.ReadConns)
	r.SetMaxIdleConns(opts.ReadConns)
	if err := r.PingContext(ctx); err != nil {
		_ = errors.Join(r.Close(), w.Close())
		return nil, fmt.Errorf("sqlitevec: open %s for reading: %w", path, err)
	}
	x.r = r
	return x, nil
}

// dsn builds a go-sqlite3 data source name; a file path becomes a file:
// URI with the path escaped.
func dsn(path string, params url.Values) string {
	if path == ":memory:" {
		return path + "?" + params.Encode()
	}
	return "file:" + (&url.URL{Path: path}).EscapedPath() + "?" + params.Encode()
}

// schema creates the index's tables; index_coarse follows once the
// dimensions are known (coarseTable).
const schema = `
CREATE TABLE IF NOT EXISTS index_config (
	key   TEXT NOT NULL PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS index_records (
	rowid  INTEGER PRIMARY KEY,
	id     TEXT NOT NULL UNIQUE,
	vector BLOB NOT NULL, -- float32 little-endian, sqlite-vec's format
	meta   BLOB NOT NULL, -- uvarint index_values ids, by key
	text   TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS index_values (
	id    INTEGER PRIMARY KEY,
	key   TEXT NOT NULL,
	value TEXT NOT NULL,
	UNIQUE (key, value)
);
CREATE TABLE IF NOT EXISTS index_postings (
	value_id INTEGER NOT NULL,
	rec      INTEGER NOT NULL,
	PRIMARY KEY (value_id, rec)
) WITHOUT ROWID;
CREATE VIRTUAL TABLE IF NOT EXISTS index_text USING fts5(
	text, content = 'index_records', content_rowid = 'rowid',
	tokenize = 'porter unicode61 remove_diacritics 2'
);
`

// coarseTable is the vec0 table of signatures of width bits.
func coarseTable(width int) string {
	return fmt.Sprintf(`CREATE VIRTUAL TABLE IF NOT EXISTS index_coarse USING vec0(embedding bit[%d])`, width)
}

// setup brings a file to this build's tables, retrying while a new file
// is busy being set up by another connection (its journal mode switching
// to WAL answers SQLITE_BUSY without waiting in the busy handler).
func (x *Index) setup(ctx context.Context, memory bool) error {
	deadline := time.Now().Add(x.opts.BusyTimeout)
	for {
		err := x.setupOnce(ctx, memory)
		if !isBusy(err) || time.Now().After(deadline) {
			return err
		}
		t := time.NewTimer(10 * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("sqlitevec: open %s: %w", x.path, ctx.Err())
		case <-t.C:
		}
	}
}

func (x *Index) setupOnce(ctx context.Context, memory bool) (err error) {
	if !memory {
		// page_size applies to a file not yet written only; WAL mode is
		// stored in the file (crawlstate/sqlite uses both alike).
		if _, err := x.w.ExecContext(ctx, `PRAGMA page_size = 8192; PRAGMA journal_mode = WAL`); err != nil {
			return fmt.Errorf("sqlitevec: open %s: %w", x.path, err)
		}
	}
	tx, err := x.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitevec: open %s: %w", x.path, err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	var appID, objects int
	if err := tx.QueryRowContext(ctx, `PRAGMA application_id`).Scan(&appID); err != nil {
		return fmt.Errorf("sqlitevec: open %s: %w", x.path, err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema`).Scan(&objects); err != nil {
		return fmt.Errorf("sqlitevec: open %s: %w (is it a SQLite database?)", x.path, err)
	}
	if appID == 0 && objects == 0 {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf(`PRAGMA application_id = %d`, recrawlApplicationID)); err != nil {
			return fmt.Errorf("sqlitevec: open %s: %w", x.path, err)
		}
	}
	if _, err := tx.ExecContext(ctx, schema); err != nil {
		return fmt.Errorf("sqlitevec: open %s: create tables: %w", x.path, err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO index_config (key, value) VALUES ('version', ?), ('signature', ?)`,
		strconv.Itoa(schemaVersion), signatureVersion); err != nil {
		return fmt.Errorf("sqlitevec: open %s: %w", x.path, err)
	}
	conf, err := readConfig(ctx, tx)
	if err != nil {
		return fmt.Errorf("sqlitevec: open %s: %w", x.path, err)
	}
	if v, _ := strconv.Atoi(conf["version"]); v != schemaVersion {
		return fmt.Errorf("sqlitevec: open %s: the index has version %q, this build knows %d; open it with a newer recrawl", x.path, conf["version"], schemaVersion)
	}
	if conf["signature"] != signatureVersion {
		return fmt.Errorf("sqlitevec: open %s: the index's signatures are %q, this build makes %q; rebuild the index", x.path, conf["signature"], signatureVersion)
	}
	stored, _ := strconv.Atoi(conf["dimensions"])
	switch {
	case stored > 0 && x.opts.Dimensions > 0 && stored != x.opts.Dimensions:
		return fmt.Errorf("sqlitevec: open %s: the index holds vectors of %d dimensions, not %d (vectors of one index must come from one embedding model)", x.path, stored, x.opts.Dimensions)
	case stored == 0 && x.opts.Dimensions > 0:
		if err := fixDimensions(ctx, tx, x.opts.Dimensions); err != nil {
			return fmt.Errorf("sqlitevec: open %s: %w", x.path, err)
		}
		stored = x.opts.Dimensions
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitevec: open %s: %w", x.path, err)
	}
	x.setDims(stored)
	return nil
}

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func readConfig(ctx context.Context, q queryer) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT key, value FROM index_config`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, v string
		if err := rows.Scan(&k, &v); err != nil {
			return nil, err
		}
		out[k] = v
	}
	return out, rows.Err()
}

// fixDimensions records the index's vector length and creates its
// signature table, in tx.
func fixDimensions(ctx context.Context, tx *sql.Tx, dims int) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO index_config (key, value) VALUES ('dimensions', ?)`, strconv.Itoa(dims)); err != nil {
		return err
	}
	_, err := tx.ExecContext(ctx, coarseTable(newSigner(dims).width))
	return err
}

func (x *Index) setDims(d int) {
	if d <= 0 {
		return
	}
	x.sigMu.Lock()
	defer x.sigMu.Unlock()
	if x.sig == nil {
		x.sig = newSigner(d)
		x.dims.Store(int64(d))
	}
}

func (x *Index) signer() *signer {
	x.sigMu.Lock()
	defer x.sigMu.Unlock()
	return x.sig
}

// dimensions returns the index's vector length, reading the file when
// it is not known yet (another process may have fixed it); 0 while no
// record fixed it.
func (x *Index) dimensions(ctx context.Context, q queryer) (int, error) {
	if d := x.dims.Load(); d > 0 {
		return int(d), nil
	}
	var v string
	err := q.QueryRowContext(ctx, `SELECT value FROM index_config WHERE key = 'dimensions'`).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	d, _ := strconv.Atoi(v)
	x.setDims(d)
	return d, nil
}

// Dimensions returns the vector length of the index, 0 while no record
// fixed it.
func (x *Index) Dimensions() int {
	d, err := x.dimensions(context.Background(), x.r)
	if err != nil {
		return int(x.dims.Load())
	}
	return d
}

// Close releases both connection pools.
func (x *Index) Close() error {
	var errR error
	if x.r != x.w {
		errR = x.r.Close()
	}
	if err := errors.Join(x.w.Close(), errR); err != nil {
		return fmt.Errorf("sqlitevec: close %s: %w", x.path, err)
	}
	return nil
}

func isBusy(err error) bool {
	var se sqlite3.Error
	return errors.As(err, &se) && (se.Code == sqlite3.ErrBusy || se.Code == sqlite3.ErrLocked)
}

// finite reports whether v holds neither NaN nor an infinity.
func finite(v []float32) bool {
	for _, f := range v {
		if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
			return false
		}
	}
	return true
}

// Upsert implements index.Writer. Records are validated before any is
// stored: an empty ID or a non-finite value gives a *index.RecordError, a
// vector of the wrong length an *index.DimensionError; the first record
// of an index without dimensions fixes them. Within one call a later
// record with the same ID wins.
func (x *Index) Upsert(ctx context.Context, records []index.Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(records) == 0 {
		return nil
	}
	dims, err := x.dimensions(ctx, x.w)
	if err != nil {
		return fmt.Errorf("sqlitevec: upsert: %w", err)
	}
	fix := dims == 0
	for _, r := range records {
		if r.ID == "" {
			return &index.RecordError{Reason: "empty ID"}
		}
		if dims == 0 {
			if len(r.Vector) == 0 {
				return &index.RecordError{ID: r.ID, Reason: "empty vector"}
			}
			dims = len(r.Vector)
		}
		if len(r.Vector) != dims {
			return &index.DimensionError{ID: r.ID, Want: dims, Got: len(r.Vector)}
		}
		if !finite(r.Vector) {
			return &index.RecordError{ID: r.ID, Reason: "vector holds NaN or infinity"}
		}
	}
	return x.write(ctx, "upsert", func(w *writer) error {
		if fix {
			// Another process may have fixed them since.
			var v string
			err := w.tx.QueryRowContext(ctx, `SELECT value FROM index_config WHERE key = 'dimensions'`).Scan(&v)
			switch {
			case errors.Is(err, sql.ErrNoRows):
				if err := fixDimensions(ctx, w.tx, dims); err != nil {
					return err
				}
			case err != nil:
				return err
			default:
				if stored, _ := strconv.Atoi(v); stored != dims {
					return &index.DimensionError{ID: records[0].ID, Want: stored, Got: dims}
				}
			}
			w.committed = func() { x.setDims(dims) }
		}
		sig := newSigner(dims)
		if s := x.signer(); s != nil {
			sig = s
		}
		for _, r := range records {
			if err := w.put(r, sig); err != nil {
				return fmt.Errorf("record %q: %w", r.ID, err)
			}
		}
		return nil
	})
}

// Delete implements index.Writer; unknown IDs are ignored.
func (x *Index) Delete(ctx context.Context, ids []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if len(ids) == 0 {
		return nil
	}
	return x.write(ctx, "delete", func(w *writer) error {
		for _, id := range ids {
			var row int64
			err := w.tx.QueryRowContext(ctx, `SELECT rowid FROM index_records WHERE id = ?`, id).Scan(&row)
			if errors.Is(err, sql.ErrNoRows) {
				continue
			}
			if err != nil {
				return err
			}
			if err := w.remove(row); err != nil {
				return fmt.Errorf("record %q: %w", id, err)
			}
		}
		return nil
	})
}

// DeleteWhere implements index.Index.
func (x *Index) DeleteWhere(ctx context.Context, filter index.Filter) (int, error) {
	if len(filter) == 0 {
		return 0, index.ErrEmptyFilter
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	n := 0
	err := x.write(ctx, "delete where", func(w *writer) error {
		n = 0
		f, err := resolve(ctx, w.tx, filter)
		if err != nil || f.none {
			return err
		}
		rows, err := scanInts(w.tx.QueryContext(ctx, `SELECT rec FROM (`+f.rowids()+`)`, f.args()...))
		if err != nil {
			return err
		}
		for _, row := range rows {
			if err := w.remove(row); err != nil {
				return err
			}
		}
		n = len(rows)
		return nil
	})
	return n, err
}

// Count implements index.Index.
func (x *Index) Count(ctx context.Context) (int, error) {
	var n int
	if err := x.r.QueryRowContext(ctx, `SELECT count(*) FROM index_records`).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlitevec: count: %w", err)
	}
	return n, nil
}

// IDs implements index.Lister: the postings of the filter's pairs give
// the records, so listing a page's records costs its records.
func (x *Index) IDs(ctx context.Context, filter index.Filter, limit int) ([]string, error) {
	if limit < 0 {
		return nil, fmt.Errorf("sqlitevec: limit is %d; ask for 0 or more IDs", limit)
	}
	if limit == 0 {
		return nil, ctx.Err()
	}
	q, args := `SELECT id FROM index_records ORDER BY id LIMIT ?`, []any{limit}
	if len(filter) > 0 {
		f, err := resolve(ctx, x.r, filter)
		if err != nil {
			return nil, fmt.Errorf("sqlitevec: ids: %w", err)
		}
		if f.none {
			return nil, nil
		}
		q = `SELECT id FROM index_records WHERE rowid IN (` + f.rowids() + `) ORDER BY id LIMIT ?`
		args = append(f.args(), limit)
	}
	rows, err := x.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("sqlitevec: ids: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("sqlitevec: ids: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("sqlitevec: ids: %w", err)
	}
	return out, nil
}

// Get returns a copy of the record with this ID.
func (x *Index) Get(ctx context.Context, id string) (index.Record, bool, error) {
	var row int64
	err := x.r.QueryRowContext(ctx, `SELECT rowid FROM index_records WHERE id = ?`, id).Scan(&row)
	if errors.Is(err, sql.ErrNoRows) {
		return index.Record{}, false, nil
	}
	if err != nil {
		return index.Record{}, false, fmt.Errorf("sqlitevec: get %q: %w", id, err)
	}
	recs, err := hydrate(ctx, x.r, []int64{row})
	if err != nil {
		return index.Record{}, false, fmt.Errorf("sqlitevec: get %q: %w", id, err)
	}
	r, ok := recs[row]
	return r, ok, nil
}

// Query implements index.Index (see Index for when it is exact). A
// query vector of the wrong length gives an *index.DimensionError, a
// non-finite one an *index.RecordError, a negative k an error. A zero
// query vector scores every record 0, so the hits are the first k
// matching records by ID.
func (x *Index) Query(ctx context.Context, vector []float32, k int, filter index.Filter) ([]index.Hit, error) {
	if k < 0 {
		return nil, fmt.Errorf("sqlitevec: k is %d; ask for 0 or more hits", k)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !finite(vector) {
		return nil, &index.RecordError{Reason: "query vector holds NaN or infinity"}
	}
	dims, err := x.dimensions(ctx, x.r)
	if err != nil {
		return nil, fmt.Errorf("sqlitevec: query: %w", err)
	}
	if dims == 0 {
		return nil, nil
	}
	if len(vector) != dims {
		return nil, &index.DimensionError{Want: dims, Got: len(vector)}
	}
	if k == 0 {
		return nil, nil
	}
	var f *resolved
	if len(filter) > 0 {
		if f, err = resolve(ctx, x.r, filter); err != nil {
			return nil, fmt.Errorf("sqlitevec: query: %w", err)
		}
		if f.none {
			return nil, nil
		}
	}
	top, err := x.nearest(ctx, vector, k, f)
	if err != nil {
		return nil, fmt.Errorf("sqlitevec: query: %w", err)
	}
	rows := make([]int64, len(top))
	for i, s := range top {
		rows[i] = s.rowid
	}
	recs, err := hydrate(ctx, x.r, rows)
	if err != nil {
		return nil, fmt.Errorf("sqlitevec: query: %w", err)
	}
	hits := make([]index.Hit, 0, len(top))
	for _, s := range top {
		if r, ok := recs[s.rowid]; ok {
			hits = append(hits, index.Hit{Record: r, Score: s.score})
		}
	}
	return hits, nil
}

// scored is a record's rowid, ID and cosine with the query.
type scored struct {
	rowid int64
	id    string
	score float32
}

// nearest returns the rowids of the k records matching f (nil: every
// record) most similar to vector, best first, equal scores by ID.
func (x *Index) nearest(ctx context.Context, vector []float32, k int, f *resolved) ([]scored, error) {
	if zero(vector) {
		// Every score is 0: the first k by ID.
		q, args := `SELECT rowid, id FROM index_records ORDER BY id LIMIT ?`, []any{k}
		if f != nil {
			q = `SELECT rowid, id FROM index_records WHERE rowid IN (` + f.rowids() + `) ORDER BY id LIMIT ?`
			args = append(f.args(), k)
		}
		return scanScored(ctx, x.r, nil, q, args...)
	}
	matching, err := x.matching(ctx, f, ExactLimit+1)
	if err != nil {
		return nil, err
	}
	want := k * x.opts.Candidates
	var cands []scored
	if matching <= ExactLimit || want > vecMaxK {
		q, args := `SELECT rowid, id, vector FROM index_records`, []any(nil)
		if f != nil {
			q, args = q+` WHERE rowid IN (`+f.rowids()+`)`, f.args()
		}
		cands, err = scanScored(ctx, x.r, vector, q, args...)
	} else {
		sig := x.signer()
		q := `SELECT r.rowid, r.id, r.vector FROM (SELECT rowid FROM index_coarse WHERE embedding MATCH vec_bit(?) AND k = ?`
		args := []any{sig.sign(vector), max(want, k)}
		if f != nil {
			q += ` AND rowid IN (` + f.rowids() + `)`
			args = append(args, f.args()...)
		}
		q += `) c JOIN index_records r ON r.rowid = c.rowid`
		cands, err = scanScored(ctx, x.r, vector, q, args...)
	}
	if err != nil {
		return nil, err
	}
	slices.SortFunc(cands, func(a, b scored) int {
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.id, b.id))
	})
	return cands[:min(k, len(cands))], nil
}

// matching counts the records matching f, up to limit.
func (x *Index) matching(ctx context.Context, f *resolved, limit int) (int, error) {
	q, args := `SELECT count(*) FROM (SELECT 1 FROM index_records LIMIT ?)`, []any{limit}
	if f != nil {
		// The rarest pair bounds the matches.
		n := limit
		for _, id := range f.ids {
			var c int
			if err := x.r.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM index_postings WHERE value_id = ? LIMIT ?)`, id, limit).Scan(&c); err != nil {
				return 0, err
			}
			n = min(n, c)
		}
		return n, nil
	}
	var n int
	err := x.r.QueryRowContext(ctx, q, args...).Scan(&n)
	return n, err
}

// scanScored runs a query of (rowid, id[, vector]) and scores each
// vector's cosine with query (no vector column: score 0).
func scanScored(ctx context.Context, q queryer, query []float32, sqlText string, args ...any) ([]scored, error) {
	rows, err := q.QueryContext(ctx, sqlText, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	qnorm := norm(query)
	var out []scored
	var blob []byte
	for rows.Next() {
		var s scored
		dest := []any{&s.rowid, &s.id}
		if query != nil {
			dest = append(dest, &blob)
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if query != nil {
			s.score = cosineBlob(query, qnorm, blob)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

func zero(v []float32) bool {
	for _, f := range v {
		if f != 0 {
			return false
		}
	}
	return true
}

func norm(v []float32) float64 {
	var s float64
	for _, f := range v {
		s += float64(f) * float64(f)
	}
	return math.Sqrt(s)
}

// cosineBlob is the cosine of q (of norm qn) with the vector in blob, in
// float64, clamped to [-1, 1]; 0 when either is zero.
func cosineBlob(q []float32, qn float64, blob []byte) float32 {
	var dot, bn float64
	for i := range q {
		v := float64(math.Float32frombits(binary.LittleEndian.Uint32(blob[4*i:])))
		dot += float64(q[i]) * v
		bn += v * v
	}
	if qn == 0 || bn == 0 {
		return 0
	}
	return float32(max(-1, min(1, dot/(qn*math.Sqrt(bn)))))
}

func encodeVector(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, f := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
	}
	return b
}

func decodeVector(b []byte) []float32 {
	v := make([]float32, len(b)/4)
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return v
}

// Search answers a hybrid query: up to q.K records matching q.Filter,
// ranked by reciprocal rank fusion of the nearest records to q.Vector (as
// Query finds them) and the best BM25 matches of q.Text's words, 3 × K
// (at least 30) deep each. A K above MaxK, or a query with neither text
// nor vector, is an error; a vector is validated as Query's is.
func (x *Index) Search(ctx context.Context, q SearchQuery) ([]Hit, error) {
	switch {
	case q.K < 0 || q.K > MaxK:
		return nil, fmt.Errorf("sqlitevec: search: k is %d; ask for 0 to %d hits", q.K, MaxK)
	case strings.TrimSpace(q.Text) == "" && q.Vector == nil:
		return nil, errors.New("sqlitevec: search: the query has neither text nor a vector")
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	dims, err := x.dimensions(ctx, x.r)
	if err != nil {
		return nil, fmt.Errorf("sqlitevec: search: %w", err)
	}
	if q.Vector != nil {
		if !finite(q.Vector) {
			return nil, &index.RecordError{Reason: "query vector holds NaN or infinity"}
		}
		if dims > 0 && len(q.Vector) != dims {
			return nil, &index.DimensionError{Want: dims, Got: len(q.Vector)}
		}
	}
	if q.K == 0 || dims == 0 {
		return nil, nil
	}
	var f *resolved
	if len(q.Filter) > 0 {
		if f, err = resolve(ctx, x.r, q.Filter); err != nil {
			return nil, fmt.Errorf("sqlitevec: search: %w", err)
		}
		if f.none {
			return nil, nil
		}
	}
	depth := max(3*q.K, 30)
	ids := map[int64]string{}
	var byVector, byText []int64
	if q.Vector != nil && !zero(q.Vector) {
		top, err := x.nearest(ctx, q.Vector, depth, f)
		if err != nil {
			return nil, fmt.Errorf("sqlitevec: search: %w", err)
		}
		for _, s := range top {
			byVector = append(byVector, s.rowid)
			ids[s.rowid] = s.id
		}
	}
	if expr := matchExpression(q.Text); expr != "" {
		sqlText := `SELECT s.rowid, r.id FROM (SELECT rowid, rank FROM index_text WHERE index_text MATCH ?`
		args := []any{expr}
		if f != nil {
			sqlText += ` AND rowid IN (` + f.rowids() + `)`
			args = append(args, f.args()...)
		}
		sqlText += ` ORDER BY rank LIMIT ?) s JOIN index_records r ON r.rowid = s.rowid ORDER BY s.rank`
		args = append(args, depth)
		top, err := scanScored(ctx, x.r, nil, sqlText, args...)
		if err != nil {
			return nil, fmt.Errorf("sqlitevec: search %q: %w", expr, err)
		}
		for _, s := range top {
			byText = append(byText, s.rowid)
			ids[s.rowid] = s.id
		}
	}
	fused := fuse(byVector, byText, ids)
	fused = fused[:min(q.K, len(fused))]
	rows := make([]int64, len(fused))
	for i, r := range fused {
		rows[i] = r.rowid
	}
	recs, err := hydrate(ctx, x.r, rows)
	if err != nil {
		return nil, fmt.Errorf("sqlitevec: search: %w", err)
	}
	qn := norm(q.Vector)
	hits := make([]Hit, 0, len(fused))
	for _, r := range fused {
		rec, ok := recs[r.rowid]
		if !ok {
			continue
		}
		var score float32
		if q.Vector != nil {
			score = cosineBlob(q.Vector, qn, encodeVector(rec.Vector))
		}
		hits = append(hits, Hit{Hit: index.Hit{Record: rec, Score: score}, VectorRank: r.vectorRank, TextRank: r.kwRank, Fused: r.fused})
	}
	return hits, nil
}

// resolved is a filter whose pairs were found in index_values.
type resolved struct {
	ids  []int64 // value ids, one per pair
	none bool    // some pair is held by no record: nothing matches
}

// resolve looks a filter's pairs up.
func resolve(ctx context.Context, q queryer, filter index.Filter) (*resolved, error) {
	f := &resolved{}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range filter {
			if !yield(k) {
				return
			}
		}
	}) {
		var id int64
		err := q.QueryRowContext(ctx, `SELECT id FROM index_values WHERE key = ? AND value = ?`, k, filter[k]).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			return &resolved{none: true}, nil
		}
		if err != nil {
			return nil, err
		}
		f.ids = append(f.ids, id)
	}
	return f, nil
}

// rowids is a query of the rowids (column rec) of the records holding
// every pair; its arguments are args().
func (f *resolved) rowids() string {
	parts := make([]string, len(f.ids))
	for i := range f.ids {
		parts[i] = `SELECT rec FROM index_postings WHERE value_id = ?`
	}
	return strings.Join(parts, ` INTERSECT `)
}

func (f *resolved) args() []any {
	out := make([]any, len(f.ids))
	for i, id := range f.ids {
		out[i] = id
	}
	return out
}

func scanInts(rows *sql.Rows, err error) ([]int64, error) {
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []int64
	for rows.Next() {
		var v int64
		if err := rows.Scan(&v); err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, rows.Err()
}

// jsonInts is a JSON array of ints, for json_each.
func jsonInts(v []int64) string {
	b, _ := json.Marshal(v) // []int64 always marshals
	return string(b)
}

// hydrate reads whole records by rowid.
func hydrate(ctx context.Context, q queryer, rowids []int64) (map[int64]index.Record, error) {
	out := make(map[int64]index.Record, len(rowids))
	if len(rowids) == 0 {
		return out, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT rowid, id, vector, meta, text FROM index_records WHERE rowid IN (SELECT value FROM json_each(?))`, jsonInts(rowids))
	if err != nil {
		return nil, err
	}
	metas := map[int64][]int64{}
	var need []int64
	for rows.Next() {
		var (
			row           int64
			r             index.Record
			vec, metaBlob []byte
		)
		if err := rows.Scan(&row, &r.ID, &vec, &metaBlob, &r.Text); err != nil {
			rows.Close()
			return nil, err
		}
		r.Vector = decodeVector(vec)
		ids, err := decodeMeta(metaBlob)
		if err != nil {
			rows.Close()
			return nil, fmt.Errorf("record %q: %w", r.ID, err)
		}
		metas[row] = ids
		need = append(need, ids...)
		out[row] = r
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, err
	}
	if len(need) == 0 {
		return out, nil
	}
	type pair struct{ k, v string }
	values := map[int64]pair{}
	vrows, err := q.QueryContext(ctx, `SELECT id, key, value FROM index_values WHERE id IN (SELECT value FROM json_each(?))`, jsonInts(need))
	if err != nil {
		return nil, err
	}
	for vrows.Next() {
		var id int64
		var p pair
		if err := vrows.Scan(&id, &p.k, &p.v); err != nil {
			vrows.Close()
			return nil, err
		}
		values[id] = p
	}
	if err := errors.Join(vrows.Err(), vrows.Close()); err != nil {
		return nil, err
	}
	for row, ids := range metas {
		if len(ids) == 0 {
			continue
		}
		r := out[row]
		r.Metadata = make(map[string]string, len(ids))
		for _, id := range ids {
			p, ok := values[id]
			if !ok {
				return nil, fmt.Errorf("record %q: metadata value %d is missing", r.ID, id)
			}
			r.Metadata[p.k] = p.v
		}
		out[row] = r
	}
	return out, nil
}

func encodeMeta(ids []int64) []byte {
	b := []byte{} // not NULL
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(id))
	}
	return b
}

func decodeMeta(b []byte) ([]int64, error) {
	var out []int64
	for len(b) > 0 {
		v, n := binary.Uvarint(b)
		if n <= 0 {
			return nil, errors.New("corrupt metadata list")
		}
		out = append(out, int64(v))
		b = b[n:]
	}
	return out, nil
}

// writer is one write transaction.
type writer struct {
	ctx       context.Context
	tx        *sql.Tx
	released  map[int64]bool // value ids whose postings shrank: maybe unused now
	committed func()
}

// write runs fn in a write transaction.
func (x *Index) write(ctx context.Context, op string, fn func(*writer) error) error {
	tx, err := x.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlitevec: %s: %w", op, err)
	}
	w := &writer{ctx: ctx, tx: tx, released: map[int64]bool{}}
	if err := fn(w); err != nil {
		_ = tx.Rollback()
		var de *index.DimensionError
		if errors.As(err, &de) {
			return err
		}
		return fmt.Errorf("sqlitevec: %s: %w", op, err)
	}
	if err := w.cleanValues(); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("sqlitevec: %s: %w", op, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlitevec: %s: commit: %w", op, err)
	}
	if w.committed != nil {
		w.committed()
	}
	return nil
}

// put inserts or replaces one record.
func (w *writer) put(r index.Record, sig *signer) error {
	ctx, tx := w.ctx, w.tx
	var (
		row     int64
		oldText string
		oldMeta []byte
	)
	err := tx.QueryRowContext(ctx, `SELECT rowid, text, meta FROM index_records WHERE id = ?`, r.ID).Scan(&row, &oldText, &oldMeta)
	exists := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range r.Metadata {
			if !yield(k) {
				return
			}
		}
	})
	ids := make([]int64, len(keys))
	for i, k := range keys {
		if ids[i], err = w.valueID(k, r.Metadata[k]); err != nil {
			return err
		}
	}
	vecBlob, meta := encodeVector(r.Vector), encodeMeta(ids)
	if exists {
		if err := w.unlink(row, oldText, oldMeta); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE index_records SET vector = ?, meta = ?, text = ? WHERE rowid = ?`, vecBlob, meta, r.Text, row); err != nil {
			return err
		}
	} else {
		res, err := tx.ExecContext(ctx, `INSERT INTO index_records (id, vector, meta, text) VALUES (?, ?, ?, ?)`, r.ID, vecBlob, meta, r.Text)
		if err != nil {
			return err
		}
		if row, err = res.LastInsertId(); err != nil {
			return err
		}
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `INSERT INTO index_postings (value_id, rec) VALUES (?, ?)`, id, row); err != nil {
			return err
		}
		delete(w.released, id)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO index_text (rowid, text) VALUES (?, ?)`, row, r.Text); err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO index_coarse (rowid, embedding) VALUES (?, vec_bit(?))`, row, sig.sign(r.Vector)); err != nil {
		return err
	}
	return nil
}

// valueID returns the id of a metadata pair, adding it when new.
func (w *writer) valueID(k, v string) (int64, error) {
	var id int64
	err := w.tx.QueryRowContext(w.ctx, `SELECT id FROM index_values WHERE key = ? AND value = ?`, k, v).Scan(&id)
	if err == nil || !errors.Is(err, sql.ErrNoRows) {
		return id, err
	}
	res, err := w.tx.ExecContext(w.ctx, `INSERT INTO index_values (key, value) VALUES (?, ?)`, k, v)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// unlink removes a record's postings, keyword entry and signature (its
// row stays, for put to rewrite or remove to delete).
func (w *writer) unlink(row int64, text string, meta []byte) error {
	ctx, tx := w.ctx, w.tx
	ids, err := decodeMeta(meta)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `DELETE FROM index_postings WHERE value_id = ? AND rec = ?`, id, row); err != nil {
			return err
		}
		w.released[id] = true
	}
	// An external-content FTS5 index forgets a row given its old text.
	if _, err := tx.ExecContext(ctx, `INSERT INTO index_text (index_text, rowid, text) VALUES ('delete', ?, ?)`, row, text); err != nil {
		return err
	}
	_, err = tx.ExecContext(ctx, `DELETE FROM index_coarse WHERE rowid = ?`, row)
	return err
}

// remove deletes a record.
func (w *writer) remove(row int64) error {
	var text string
	var meta []byte
	if err := w.tx.QueryRowContext(w.ctx, `SELECT text, meta FROM index_records WHERE rowid = ?`, row).Scan(&text, &meta); err != nil {
		return err
	}
	if err := w.unlink(row, text, meta); err != nil {
		return err
	}
	_, err := w.tx.ExecContext(w.ctx, `DELETE FROM index_records WHERE rowid = ?`, row)
	return err
}

// cleanValues deletes the metadata pairs no record holds any more.
func (w *writer) cleanValues() error {
	for id := range w.released {
		if _, err := w.tx.ExecContext(w.ctx, `DELETE FROM index_values WHERE id = ? AND NOT EXISTS (SELECT 1 FROM index_postings WHERE value_id = ?)`, id, id); err != nil {
			return err
		}
	}
	return nil
}
