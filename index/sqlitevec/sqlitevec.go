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
	"maps"
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
// Query is exact: SQLite scores the vector of every record matching its
// filter, with sqlite-vec's vec_distance_cosine, and the best are scored
// again in float64; its cost grows with the matching records, about 1 µs
// a record of 384 dimensions (BENCHMARKS.md has it for the bench site).
// Search is the fast path (see its documentation): it ranks by exact
// cosine only the candidates that the records' binary signatures (see
// signer: 64 bytes a record for 384 dimensions, compared by sqlite-vec's
// KNN without a multiplication) and the keyword index propose.
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

// ExactLimit is how many matching records Search scores one by one
// before it lets sqlite-vec propose candidates by signature.
const ExactLimit = 1024

// MaxTermRecords is how many records a keyword may be in and still be
// searched for. BM25 weighs a word by its rarity, so a word most records
// hold ranks little and costs much (every record holding it is scored):
// Search leaves such words out of the keyword query. In an index of up to
// twice as many records this drops only words BM25 weighs at zero.
const MaxTermRecords = 5000

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
		return nil, fmt.Errorf("sqlitevec: open %s: %d candidates per hit; pass 0 (the default, 4) or more", path, opts.Candidates)
	}
	if opts.BusyTimeout == 0 {
		opts.BusyTimeout = DefaultBusyTimeout
	}
	if opts.ReadConns == 0 {
		opts.ReadConns = 4
	}
	if opts.Candidates == 0 {
		opts.Candidates = 4
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
	params.Set("_cache_size", "-65536")
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

// schema creates the index's tables; index_signatures follows once the
// dimensions are known (signatureTable).
const schema = `
CREATE TABLE IF NOT EXISTS index_config (
	key   TEXT NOT NULL PRIMARY KEY,
	value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS index_records (
	rowid  INTEGER PRIMARY KEY,
	id     TEXT NOT NULL UNIQUE,
	meta   BLOB NOT NULL, -- uvarint index_values ids, by key
	text   TEXT NOT NULL
);
-- A record's vector, by its rowid: float32 little-endian, sqlite-vec's
-- format. Its own table keeps index_records' rows small enough to share
-- pages; and a B-tree reuses what a deleted vector freed, which
-- sqlite-vec's chunks do not.
CREATE TABLE IF NOT EXISTS index_vectors (
	rowid  INTEGER PRIMARY KEY,
	vector BLOB NOT NULL
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

// signatureTable is the vec0 table of signatures of width bits, by the
// rowid of their record.
func signatureTable(width int) string {
	return fmt.Sprintf(`CREATE VIRTUAL TABLE IF NOT EXISTS index_signatures USING vec0(signature bit[%d])`, width)
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
	_, err := tx.ExecContext(ctx, signatureTable(newSigner(dims).width))
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
	var out []string
	err := x.read(ctx, func(db queryer) error {
		q, args := `SELECT id FROM index_records ORDER BY id LIMIT ?`, []any{limit}
		f, err := resolve(ctx, db, filter)
		if err != nil || f.none {
			return err
		}
		if f.any() {
			q = `SELECT id FROM index_records WHERE rowid IN (` + f.rowids() + `) ORDER BY id LIMIT ?`
			args = append(f.args(), limit)
		}
		rows, err := db.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var id string
			if err := rows.Scan(&id); err != nil {
				return err
			}
			out = append(out, id)
		}
		return rows.Err()
	})
	return out, wrap("ids", err)
}

// Get returns a copy of the record with this ID.
func (x *Index) Get(ctx context.Context, id string) (r index.Record, ok bool, err error) {
	err = x.read(ctx, func(db queryer) error {
		r, ok, err = x.get(ctx, db, id)
		return err
	})
	return r, ok, err
}

// read runs fn in a read transaction, so that the statements of one
// query see one state of the file.
func (x *Index) read(ctx context.Context, fn func(db queryer) error) error {
	tx, err := x.r.BeginTx(ctx, nil)
	if err != nil {
		return wrap("read", err)
	}
	defer tx.Rollback() //nolint:errcheck // a read transaction has nothing to keep
	return fn(tx)
}

func (x *Index) get(ctx context.Context, db queryer, id string) (index.Record, bool, error) {
	var row int64
	err := db.QueryRowContext(ctx, `SELECT rowid FROM index_records WHERE id = ?`, id).Scan(&row)
	if errors.Is(err, sql.ErrNoRows) {
		return index.Record{}, false, nil
	}
	if err != nil {
		return index.Record{}, false, fmt.Errorf("sqlitevec: get %q: %w", id, err)
	}
	recs, err := x.hydrate(ctx, db, []int64{row}, nil)
	if err != nil {
		return index.Record{}, false, fmt.Errorf("sqlitevec: get %q: %w", id, err)
	}
	r, ok := recs[row]
	return r, ok, nil
}

// Query implements index.Index (exact: see Index). A query vector of the
// wrong length gives an *index.DimensionError, a non-finite one an
// *index.RecordError, a negative k an error. A zero query vector scores
// every record 0, so the hits are the first k matching records by ID.
func (x *Index) Query(ctx context.Context, vector []float32, k int, filter index.Filter) (hits []index.Hit, err error) {
	if k < 0 {
		return nil, fmt.Errorf("sqlitevec: k is %d; ask for 0 or more hits", k)
	}
	err = x.read(ctx, func(db queryer) error {
		hits, err = x.query(ctx, db, vector, k, filter)
		return err
	})
	return hits, err
}

func (x *Index) query(ctx context.Context, db queryer, vector []float32, k int, filter index.Filter) ([]index.Hit, error) {
	f, dims, err := x.prepare(ctx, db, vector, filter)
	if err != nil || dims == 0 || k == 0 || f.none {
		return nil, wrap("query", err)
	}
	var top []scored
	if zero(vector) {
		top, err = x.firstByID(ctx, db, k, f)
	} else {
		top, err = x.nearest(ctx, db, vector, k, f)
	}
	if err != nil {
		return nil, wrap("query", err)
	}
	top = best(top, k)
	rows := make([]int64, len(top))
	for i, s := range top {
		rows[i] = s.rowid
	}
	recs, err := x.hydrate(ctx, db, rows, top)
	if err != nil {
		return nil, wrap("query", err)
	}
	hits := make([]index.Hit, 0, len(top))
	for _, s := range top {
		if r, ok := recs[s.rowid]; ok {
			hits = append(hits, index.Hit{Record: r, Score: s.score})
		}
	}
	return hits, nil
}

func wrap(op string, err error) error {
	var de *index.DimensionError
	var re *index.RecordError
	if err == nil || errors.As(err, &de) || errors.As(err, &re) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("sqlitevec: %s: %w", op, err)
}

// prepare validates a query vector (nil: none) and resolves filter. dims
// is 0 for an index that never held a record.
func (x *Index) prepare(ctx context.Context, db queryer, vector []float32, filter index.Filter) (*resolved, int, error) {
	if err := ctx.Err(); err != nil {
		return nil, 0, err
	}
	if !finite(vector) {
		return nil, 0, &index.RecordError{Reason: "query vector holds NaN or infinity"}
	}
	dims, err := x.dimensions(ctx, db)
	if err != nil || dims == 0 {
		return nil, 0, err
	}
	if vector != nil && len(vector) != dims {
		return nil, 0, &index.DimensionError{Want: dims, Got: len(vector)}
	}
	f, err := resolve(ctx, db, filter)
	return f, dims, err
}

// scored is a record's rowid, ID and cosine with the query (vec: its
// vector, when read).
type scored struct {
	rowid int64
	id    string
	score float32
	vec   []float32
}

// best sorts by falling score, equal scores by ID, and keeps k.
func best(s []scored, k int) []scored {
	slices.SortFunc(s, func(a, b scored) int {
		return cmp.Or(cmp.Compare(b.score, a.score), strings.Compare(a.id, b.id))
	})
	return s[:min(k, len(s))]
}

// firstByID returns the first k records matching f by ID, scored 0.
func (x *Index) firstByID(ctx context.Context, db queryer, k int, f *resolved) ([]scored, error) {
	q, args := `SELECT rowid, id FROM index_records ORDER BY id LIMIT ?`, []any{k}
	if f.any() {
		q = `SELECT rowid, id FROM index_records WHERE rowid IN (` + f.rowids() + `) ORDER BY id LIMIT ?`
		args = append(f.args(), k)
	}
	return queryRecords(ctx, db, q, args...)
}

// queryRecords runs a query of (rowid, id) and returns its rows, unscored.
func queryRecords(ctx context.Context, db queryer, q string, args ...any) ([]scored, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []scored
	for rows.Next() {
		var s scored
		if err := rows.Scan(&s.rowid, &s.id); err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, rows.Err()
}

// nearest returns the n records matching f nearest to query, scored
// exactly. SQLite ranks every matching vector by sqlite-vec's
// vec_distance_cosine (float32 sums, in C) and keeps the n + nearSlack
// best (a zero vector's undefined distance counts as 1, a cosine of 0);
// those are scored again in float64, so that scores which tie or nearly
// tie around the n-th place are ordered exactly, equal ones by ID.
func (x *Index) nearest(ctx context.Context, db queryer, query []float32, n int, f *resolved) ([]scored, error) {
	rank := func(limit string, extra ...any) ([]scored, []float64, error) {
		q := `SELECT c.rowid, r.id, c.d FROM (SELECT v.rowid, coalesce(vec_distance_cosine(v.vector, ?), 1.0) AS d FROM index_vectors v`
		args := []any{encodeVector(query)}
		if f.any() {
			q += ` WHERE v.rowid IN (` + f.rowids() + `)`
			args = append(args, f.args()...)
		}
		q += `) c JOIN index_records r ON r.rowid = c.rowid ` + limit
		rows, err := db.QueryContext(ctx, q, append(args, extra...)...)
		if err != nil {
			return nil, nil, err
		}
		defer rows.Close()
		var out []scored
		var ds []float64
		for rows.Next() {
			var s scored
			var d float64
			if err := rows.Scan(&s.rowid, &s.id, &d); err != nil {
				return nil, nil, err
			}
			out, ds = append(out, s), append(ds, d)
		}
		return out, ds, rows.Err()
	}
	out, ds, err := rank(`ORDER BY c.d LIMIT ?`, n+nearSlack)
	if err != nil {
		return nil, err
	}
	// More records than the slack tie with the n-th: take every one of
	// them, so that the tie is broken by ID.
	if len(out) == n+nearSlack && ds[len(ds)-1]-ds[n-1] <= tieDistance {
		if out, _, err = rank(`WHERE c.d <= ?`, ds[n-1]+tieDistance); err != nil {
			return nil, err
		}
	}
	if err := x.rescore(ctx, db, query, out); err != nil {
		return nil, err
	}
	return best(out, n), nil
}

// tieDistance is how close two float32 cosine distances must be for
// nearest to treat them as a possible tie.
const tieDistance = 1e-4

// nearSlack is how many records past the n-th nearest ranks again.
const nearSlack = 32

// rescore reads the vectors of s and scores them against query.
func (x *Index) rescore(ctx context.Context, db queryer, query []float32, s []scored) error {
	if len(s) == 0 {
		return nil
	}
	rowids := make([]int64, len(s))
	at := make(map[int64]int, len(s))
	for i, c := range s {
		rowids[i], at[c.rowid] = c.rowid, i
	}
	rows, err := db.QueryContext(ctx, `SELECT rowid, vector FROM index_vectors WHERE rowid IN (SELECT value FROM json_each(?))`, jsonInts(rowids))
	if err != nil {
		return err
	}
	defer rows.Close()
	qn := norm(query)
	var row int64
	var blob []byte
	for rows.Next() {
		if err := rows.Scan(&row, &blob); err != nil {
			return err
		}
		i := at[row]
		s[i].vec = decodeVector(blob)
		s[i].score = cosine(query, qn, s[i].vec)
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for _, c := range s {
		if c.vec == nil {
			return fmt.Errorf("record %q has no vector", c.id)
		}
	}
	return nil
}

// knn asks sqlite-vec for the n records matching f whose signatures are
// nearest query's (Hamming distance), and scores them exactly.
func (x *Index) knn(ctx context.Context, db queryer, query []float32, n int, f *resolved) ([]scored, error) {
	q := `SELECT c.rowid, r.id FROM (SELECT rowid FROM index_signatures WHERE signature MATCH vec_bit(?) AND k = ?`
	args := []any{x.signer().sign(query), n}
	if f.any() {
		q += ` AND rowid IN (` + f.rowids() + `)`
		args = append(args, f.args()...)
	}
	q += `) c JOIN index_records r ON r.rowid = c.rowid`
	out, err := queryRecords(ctx, db, q, args...)
	if err != nil {
		return nil, err
	}
	return out, x.rescore(ctx, db, query, out)
}

// matching counts the records matching f, up to limit: the rarest pair
// bounds them.
func (x *Index) matching(ctx context.Context, db queryer, f *resolved, limit int) (int, error) {
	var n int
	switch {
	case !f.any():
		err := db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM index_records LIMIT ?)`, limit).Scan(&n)
		return n, err
	case len(f.ids) == 1:
		err := db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM index_postings WHERE value_id = ? LIMIT ?)`, f.ids[0], limit).Scan(&n)
		return n, err
	}
	return min(limit, f.counts[0]), nil // resolve counted up to countLimit
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

// cosineBlob is cosine with the vector in a BLOB of encodeVector.
func cosineBlob(q []float32, qn float64, blob []byte) float32 {
	var dot, vn float64
	for i := range q {
		v := float64(math.Float32frombits(binary.LittleEndian.Uint32(blob[4*i:])))
		dot += float64(q[i]) * v
		vn += v * v
	}
	if qn == 0 || vn == 0 {
		return 0
	}
	return float32(max(-1, min(1, dot/(qn*math.Sqrt(vn)))))
}

// cosine is the cosine of q (of norm qn) and v in float64, clamped to
// [-1, 1]; 0 when either is zero.
func cosine(q []float32, qn float64, v []float32) float32 {
	var dot, vn float64
	for i := range q {
		dot += float64(q[i]) * float64(v[i])
		vn += float64(v[i]) * float64(v[i])
	}
	if qn == 0 || vn == 0 {
		return 0
	}
	return float32(max(-1, min(1, dot/(qn*math.Sqrt(vn)))))
}

// encodeVector is sqlite-vec's float32 BLOB format (little-endian).
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
// ranked by reciprocal rank fusion of two lists of 3 × K (at least 30)
// records each:
//
//   - by vector: the candidates, ranked by exact cosine with q.Vector.
//     Up to ExactLimit matching records every one is a candidate; past
//     that they are the Options.Candidates × K (at least 40) records whose
//     signatures are nearest the query's (sqlite-vec's KNN over 64-byte
//     signatures), and the records of the keyword list. So it is exact on
//     a small index or a narrow filter, and on a large one misses what
//     neither signatures nor keywords propose: on 12,288 chunks of prose
//     embedded by embed.Hashing, whose vectors are lexical and of low
//     contrast, Search by vector alone finds 0.38 of the exact top 10
//     (TestRecall); the keyword list then finds the records that share
//     the query's rare words, which are those vectors' nearest;
//   - by keywords: the records holding q.Text's words, by BM25 (FTS5;
//     Porter stemming), leaving out words in more than MaxTermRecords
//     records.
//
// A K above MaxK, or a query with neither text nor vector, is an error; a
// vector is validated as Query's is.
func (x *Index) Search(ctx context.Context, q SearchQuery) ([]Hit, error) {
	switch {
	case q.K < 0 || q.K > MaxK:
		return nil, fmt.Errorf("sqlitevec: search: k is %d; ask for 0 to %d hits", q.K, MaxK)
	case strings.TrimSpace(q.Text) == "" && q.Vector == nil:
		return nil, errors.New("sqlitevec: search: the query has neither text nor a vector")
	}
	var hits []Hit
	err := x.read(ctx, func(db queryer) (err error) {
		hits, err = x.search(ctx, db, q)
		return err
	})
	return hits, err
}

func (x *Index) search(ctx context.Context, db queryer, q SearchQuery) ([]Hit, error) {
	f, dims, err := x.prepare(ctx, db, q.Vector, q.Filter)
	if err != nil || dims == 0 || q.K == 0 || f.none {
		return nil, wrap("search", err)
	}
	depth := max(3*q.K, 30)
	byText, err := x.keywords(ctx, db, q.Text, depth, f)
	if err != nil {
		return nil, wrap("search", err)
	}
	var byVector []scored
	if q.Vector != nil && !zero(q.Vector) {
		if byVector, err = x.vectorCandidates(ctx, db, q.Vector, q.K, depth, f, byText); err != nil {
			return nil, wrap("search", err)
		}
		byVector = best(byVector, depth)
	}
	ids := map[int64]string{}
	rank := func(s []scored) []int64 {
		out := make([]int64, len(s))
		for i, r := range s {
			out[i], ids[r.rowid] = r.rowid, r.id
		}
		return out
	}
	fused := fuse(rank(byVector), rank(byText), ids)
	fused = fused[:min(q.K, len(fused))]
	rows := make([]int64, len(fused))
	for i, r := range fused {
		rows[i] = r.rowid
	}
	recs, err := x.hydrate(ctx, db, rows, byVector)
	if err != nil {
		return nil, wrap("search", err)
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
			score = cosine(q.Vector, qn, rec.Vector)
		}
		hits = append(hits, Hit{Hit: index.Hit{Record: rec, Score: score}, VectorRank: r.vectorRank, TextRank: r.kwRank, Fused: r.fused})
	}
	return hits, nil
}

// vectorCandidates returns Search's vector candidates, scored.
func (x *Index) vectorCandidates(ctx context.Context, db queryer, vector []float32, k, depth int, f *resolved, byText []scored) ([]scored, error) {
	matching, err := x.matching(ctx, db, f, countLimit)
	if err != nil {
		return nil, err
	}
	if matching <= ExactLimit {
		return x.nearest(ctx, db, vector, depth, f)
	}
	cands, err := x.knn(ctx, db, vector, min(vecMaxK, max(x.opts.Candidates*k, 40)), f)
	if err != nil {
		return nil, err
	}
	seen := map[int64]bool{}
	for _, c := range cands {
		seen[c.rowid] = true
	}
	var more []scored
	for _, t := range byText {
		if !seen[t.rowid] {
			more = append(more, scored{rowid: t.rowid, id: t.id})
		}
	}
	if err := x.rescore(ctx, db, vector, more); err != nil {
		return nil, err
	}
	return append(cands, more...), nil
}

// keywords returns up to n records matching f that hold text's words, by
// BM25, best first; words in more than MaxTermRecords records are left
// out (see MaxTermRecords).
func (x *Index) keywords(ctx context.Context, db queryer, text string, n int, f *resolved) ([]scored, error) {
	var use []string
	for _, t := range queryTerms(text) {
		var c int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM index_text WHERE index_text MATCH ? LIMIT ?)`, t, MaxTermRecords+1).Scan(&c); err != nil {
			return nil, fmt.Errorf("keyword %s: %w", t, err)
		}
		if c > 0 && c <= MaxTermRecords {
			use = append(use, t)
		}
	}
	if len(use) == 0 {
		return nil, nil
	}
	q := `SELECT s.rowid, r.id FROM (SELECT rowid, rank FROM index_text WHERE index_text MATCH ?`
	args := []any{strings.Join(use, " OR ")}
	if f.any() {
		q += ` AND rowid IN (` + f.rowids() + `)`
		args = append(args, f.args()...)
	}
	q += ` ORDER BY rank LIMIT ?) s JOIN index_records r ON r.rowid = s.rowid ORDER BY s.rank`
	args = append(args, n)
	out, err := queryRecords(ctx, db, q, args...)
	if err != nil {
		return nil, fmt.Errorf("keywords %s: %w", args[0], err)
	}
	return out, nil
}

// resolved is a filter whose pairs were found in index_values.
type resolved struct {
	ids    []int64 // value ids, one per pair, the rarest first
	counts []int   // the records holding each, up to countLimit
	none   bool    // some pair is held by no record: nothing matches
}

// countLimit bounds the counting of a pair's records.
const countLimit = ExactLimit + 1

// any reports whether f restricts the records at all.
func (f *resolved) any() bool { return len(f.ids) > 0 }

// resolve looks a filter's pairs up and counts their records (up to
// countLimit); an empty filter resolves to one that matches every record.
func resolve(ctx context.Context, q queryer, filter index.Filter) (*resolved, error) {
	f := &resolved{}
	type pair struct {
		id    int64
		count int
	}
	var pairs []pair
	for _, k := range slices.Sorted(maps.Keys(filter)) {
		var p pair
		err := q.QueryRowContext(ctx, `SELECT id FROM index_values WHERE key = ? AND value = ?`, k, filter[k]).Scan(&p.id)
		if errors.Is(err, sql.ErrNoRows) {
			return &resolved{none: true}, nil
		}
		if err != nil {
			return nil, err
		}
		if len(filter) > 1 {
			if err := q.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT 1 FROM index_postings WHERE value_id = ? LIMIT ?)`, p.id, countLimit).Scan(&p.count); err != nil {
				return nil, err
			}
		}
		pairs = append(pairs, p)
	}
	slices.SortStableFunc(pairs, func(a, b pair) int { return cmp.Compare(a.count, b.count) })
	for _, p := range pairs {
		f.ids, f.counts = append(f.ids, p.id), append(f.counts, p.count)
	}
	return f, nil
}

// rowids is a query of the rowids (column rec) of the records holding
// every pair: the rarest pair's postings, each looked up in the others';
// its arguments are args().
func (f *resolved) rowids() string {
	var b strings.Builder
	b.WriteString(`SELECT p0.rec FROM index_postings p0 WHERE p0.value_id = ?`)
	for i := 1; i < len(f.ids); i++ {
		fmt.Fprintf(&b, ` AND EXISTS (SELECT 1 FROM index_postings p%d WHERE p%d.value_id = ? AND p%d.rec = p0.rec)`, i, i, i)
	}
	return b.String()
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

// hydrate reads whole records by rowid; known holds records whose
// vectors were read already.
func (x *Index) hydrate(ctx context.Context, db queryer, rowids []int64, known []scored) (map[int64]index.Record, error) {
	out := make(map[int64]index.Record, len(rowids))
	if len(rowids) == 0 {
		return out, nil
	}
	rows, err := db.QueryContext(ctx, `SELECT rowid, id, meta, text FROM index_records WHERE rowid IN (SELECT value FROM json_each(?))`, jsonInts(rowids))
	if err != nil {
		return nil, err
	}
	metas := map[int64][]int64{}
	var need []int64
	for rows.Next() {
		var (
			row      int64
			r        index.Record
			metaBlob []byte
		)
		if err := rows.Scan(&row, &r.ID, &metaBlob, &r.Text); err != nil {
			rows.Close()
			return nil, err
		}
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
	vecs := map[int64][]float32{}
	for _, s := range known {
		if s.vec != nil {
			vecs[s.rowid] = s.vec
		}
	}
	var missing []scored
	for row, r := range out {
		if _, ok := vecs[row]; !ok {
			missing = append(missing, scored{rowid: row, id: r.ID})
		}
	}
	if err := x.rescore(ctx, db, nil, missing); err != nil {
		return nil, err
	}
	for _, s := range missing {
		vecs[s.rowid] = s.vec
	}
	values, err := readValues(ctx, db, need)
	if err != nil {
		return nil, err
	}
	for row, r := range out {
		r.Vector = slices.Clone(vecs[row])
		if ids := metas[row]; len(ids) > 0 {
			r.Metadata = make(map[string]string, len(ids))
			for _, id := range ids {
				p, ok := values[id]
				if !ok {
					return nil, fmt.Errorf("record %q: metadata value %d is missing", r.ID, id)
				}
				r.Metadata[p[0]] = p[1]
			}
		}
		out[row] = r
	}
	return out, nil
}

// readValues reads metadata pairs by id.
func readValues(ctx context.Context, q queryer, ids []int64) (map[int64][2]string, error) {
	values := map[int64][2]string{}
	if len(ids) == 0 {
		return values, nil
	}
	rows, err := q.QueryContext(ctx, `SELECT id, key, value FROM index_values WHERE id IN (SELECT value FROM json_each(?))`, jsonInts(ids))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var p [2]string
		if err := rows.Scan(&id, &p[0], &p[1]); err != nil {
			return nil, err
		}
		values[id] = p
	}
	return values, rows.Err()
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
	values    map[[2]string]int64
	stmts     map[string]*sql.Stmt // prepared once per transaction
	committed func()
}

// stmt returns q prepared in the transaction.
func (w *writer) stmt(q string) (*sql.Stmt, error) {
	if st, ok := w.stmts[q]; ok {
		return st, nil
	}
	st, err := w.tx.PrepareContext(w.ctx, q)
	if err != nil {
		return nil, err
	}
	w.stmts[q] = st
	return st, nil
}

func (w *writer) exec(q string, args ...any) (sql.Result, error) {
	st, err := w.stmt(q)
	if err != nil {
		return nil, err
	}
	return st.ExecContext(w.ctx, args...)
}

// scan runs a query of one row and scans it; sql.ErrNoRows when none.
func (w *writer) scan(q string, args []any, dest ...any) error {
	st, err := w.stmt(q)
	if err != nil {
		return err
	}
	return st.QueryRowContext(w.ctx, args...).Scan(dest...)
}

// write runs fn in a write transaction.
func (x *Index) write(ctx context.Context, op string, fn func(*writer) error) error {
	tx, err := x.w.BeginTx(ctx, nil)
	if err != nil {
		return wrap(op, err)
	}
	w := &writer{ctx: ctx, tx: tx, released: map[int64]bool{}, values: map[[2]string]int64{}, stmts: map[string]*sql.Stmt{}}
	if err := fn(w); err != nil {
		_ = tx.Rollback()
		return wrap(op, err)
	}
	if err := w.cleanValues(); err != nil {
		_ = tx.Rollback()
		return wrap(op, err)
	}
	if err := tx.Commit(); err != nil {
		return wrap(op+": commit", err)
	}
	if w.committed != nil {
		w.committed()
	}
	return nil
}

// put inserts or replaces one record.
func (w *writer) put(r index.Record, sig *signer) error {
	var (
		row     int64
		oldText string
		oldMeta []byte
	)
	err := w.scan(`SELECT rowid, text, meta FROM index_records WHERE id = ?`, []any{r.ID}, &row, &oldText, &oldMeta)
	exists := err == nil
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	keys := slices.Sorted(maps.Keys(r.Metadata))
	ids := make([]int64, len(keys))
	for i, k := range keys {
		if ids[i], err = w.valueID(k, r.Metadata[k]); err != nil {
			return err
		}
	}
	meta, vec, signature := encodeMeta(ids), encodeVector(r.Vector), sig.sign(r.Vector)
	if exists {
		if err := w.unlink(row, oldText, oldMeta); err != nil {
			return err
		}
		if _, err := w.exec(`UPDATE index_records SET meta = ?, text = ? WHERE rowid = ?`, meta, r.Text, row); err != nil {
			return err
		}
		if _, err := w.exec(`UPDATE index_vectors SET vector = ? WHERE rowid = ?`, vec, row); err != nil {
			return err
		}
		// sqlite-vec's UPDATE loses vec_bit's type: replace the row.
		if _, err := w.exec(`DELETE FROM index_signatures WHERE rowid = ?`, row); err != nil {
			return err
		}
	} else {
		res, err := w.exec(`INSERT INTO index_records (id, meta, text) VALUES (?, ?, ?)`, r.ID, meta, r.Text)
		if err != nil {
			return err
		}
		if row, err = res.LastInsertId(); err != nil {
			return err
		}
		if _, err := w.exec(`INSERT INTO index_vectors (rowid, vector) VALUES (?, ?)`, row, vec); err != nil {
			return err
		}
	}
	if _, err := w.exec(`INSERT INTO index_signatures (rowid, signature) VALUES (?, vec_bit(?))`, row, signature); err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := w.exec(`INSERT INTO index_postings (value_id, rec) VALUES (?, ?)`, id, row); err != nil {
			return err
		}
		delete(w.released, id)
	}
	_, err = w.exec(`INSERT INTO index_text (rowid, text) VALUES (?, ?)`, row, r.Text)
	return err
}

// valueID returns the id of a metadata pair, adding it when new.
// The records of one call (a page) share most of their values, which
// are looked up once per call.
func (w *writer) valueID(k, v string) (int64, error) {
	if id, ok := w.values[[2]string{k, v}]; ok {
		return id, nil
	}
	var id int64
	err := w.scan(`SELECT id FROM index_values WHERE key = ? AND value = ?`, []any{k, v}, &id)
	if errors.Is(err, sql.ErrNoRows) {
		var res sql.Result
		if res, err = w.exec(`INSERT INTO index_values (key, value) VALUES (?, ?)`, k, v); err == nil {
			id, err = res.LastInsertId()
		}
	}
	if err != nil {
		return 0, err
	}
	w.values[[2]string{k, v}] = id
	return id, nil
}

// unlink removes a record's postings and keyword entry (its row and
// vector stay, for put to rewrite or remove to delete).
func (w *writer) unlink(row int64, text string, meta []byte) error {
	ids, err := decodeMeta(meta)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, err := w.exec(`DELETE FROM index_postings WHERE value_id = ? AND rec = ?`, id, row); err != nil {
			return err
		}
		w.released[id] = true
	}
	// An external-content FTS5 index forgets a row given its old text.
	_, err = w.exec(`INSERT INTO index_text (index_text, rowid, text) VALUES ('delete', ?, ?)`, row, text)
	return err
}

// remove deletes a record.
func (w *writer) remove(row int64) error {
	var text string
	var meta []byte
	if err := w.scan(`SELECT text, meta FROM index_records WHERE rowid = ?`, []any{row}, &text, &meta); err != nil {
		return err
	}
	if err := w.unlink(row, text, meta); err != nil {
		return err
	}
	if _, err := w.exec(`DELETE FROM index_vectors WHERE rowid = ?`, row); err != nil {
		return err
	}
	if _, err := w.exec(`DELETE FROM index_signatures WHERE rowid = ?`, row); err != nil {
		return err
	}
	_, err := w.exec(`DELETE FROM index_records WHERE rowid = ?`, row)
	return err
}

// cleanValues deletes the metadata pairs no record holds any more.
func (w *writer) cleanValues() error {
	for id := range w.released {
		if _, err := w.exec(`DELETE FROM index_values WHERE id = ? AND NOT EXISTS (SELECT 1 FROM index_postings WHERE value_id = ?)`, id, id); err != nil {
			return err
		}
	}
	return nil
}
