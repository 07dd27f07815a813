// Package sqlitevec is an index.Index that lives in a SQLite file, beside
// the crawl state of crawlstate/sqlite if you like: vectors go through
// sqlite-vec (github.com/asg017/sqlite-vec-go-bindings, compiled into the
// program with cgo on mattn/go-sqlite3) and chunk texts through SQLite's
// FTS5 full-text index, so one file holds the state, the vectors and the
// keyword postings, and it survives a restart.
//
// Besides index.Index and index.Lister it answers hybrid queries (Search):
// the nearest records to a vector and the best keyword matches of a text
// (BM25), fused by reciprocal rank fusion, with the same metadata filters
// as index.Memory.
//
// # Building
//
// The package needs cgo and mattn/go-sqlite3's sqlite_fts5 build tag,
// which compiles FTS5 into SQLite:
//
//	go test -tags sqlite_fts5 ./...
//	go build -tags sqlite_fts5 ./examples/docsmcp
//
// Built without either (CGO_ENABLED=0, or no tag), the package still
// compiles, and Open returns an error wrapping ErrUnavailable that says
// which is missing. sqlite-vec's C source includes sqlite3.h, which on
// Debian comes with the libsqlite3-dev package (the headers only: the
// SQLite linked in is go-sqlite3's).
//
// # How it stores an index
//
// Every table's name starts with "index_", so the index shares a file
// with crawlstate/sqlite without touching its tables (open the file with
// both, in either order; see Open). Records are rows of index_records
// (ID, text, metadata as references to index_values); index_vectors holds
// each record's float32 vector in sqlite-vec's BLOB format; index_postings
// lists, for every metadata key and value, the records that hold it,
// which is what filters read; index_text is an FTS5 index over the texts,
// with index_records as its content table (a text is stored once); and
// index_signatures is a sqlite-vec vec0 table of each vector's binary
// signature, which Search's coarse step scans (see Index and Search).
//
// sqlite-vec's vec0 tables do not reuse the slot of a deleted row except
// in their last chunk, so a signature table under heavy churn grows by 64
// bytes (for 384 dimensions) per replaced record until rebuilt; the
// vectors, texts and postings are ordinary B-trees and reuse their space.
package sqlitevec
