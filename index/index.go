// Package index stores chunk vectors with their provenance and answers
// nearest-neighbour queries.
//
// Writer (Upsert, Delete) is the part the engine depends on; Index adds
// the queries users make. Memory is the embedded default: an exact
// (brute-force) cosine index in memory, with metadata equality filters and
// a snapshot file so that it survives a restart. Other stores implement
// Index in their own packages (index/pgvector); index/indextest is the
// conformance suite they share with Memory.
package index

import (
	"context"
	"errors"
	"fmt"
)

// Record is one stored vector with its provenance.
type Record struct {
	// ID identifies the record; upserting an existing ID replaces it.
	ID string
	// Vector is the embedding; all records of an index have the same length.
	Vector []float32
	// Metadata is matched by Filter, e.g. "source_url", "content_hash".
	Metadata map[string]string
	// Text is the chunk text the vector was made from.
	Text string
}

// Hit is a query result: a record and its cosine similarity to the query,
// in [-1, 1] (0 when either vector is zero).
type Hit struct {
	Record
	Score float32
}

// Filter selects records by metadata equality: a record matches when, for
// every key of the filter, its metadata holds that key with that value. An
// empty filter matches every record.
type Filter map[string]string

// Match reports whether metadata satisfies f.
func (f Filter) Match(metadata map[string]string) bool {
	for k, v := range f {
		got, ok := metadata[k]
		if !ok || got != v {
			return false
		}
	}
	return true
}

// Writer is the part of an index that the engine needs: it writes a
// page's records and removes them. recrawl.Config.Index takes a Writer;
// the engine finds the further abilities it can use (Lister, Query,
// DeleteWhere) by type assertion.
//
// Implementations are safe for concurrent use. Each method applies fully
// or, when it returns an error, not at all. Records passed in are copies:
// callers may reuse or modify them afterwards.
type Writer interface {
	// Upsert inserts the records, replacing records with the same ID. A
	// vector whose length differs from the index's gives a *DimensionError.
	Upsert(ctx context.Context, records []Record) error
	// Delete removes the records with these IDs; unknown IDs are ignored.
	Delete(ctx context.Context, ids []string) error
}

// Index is a Writer that also finds the nearest records to a vector: the
// interface for users who query what the engine wrote.
//
// Implementations are safe for concurrent use. Each method applies fully
// or, when it returns an error, not at all. Records passed in and returned
// are copies: callers may reuse or modify them afterwards.
// indextest.Run checks an implementation against this contract.
type Index interface {
	Writer
	// DeleteWhere removes the records matching filter and returns how many
	// it removed. An empty filter is refused with ErrEmptyFilter, so a
	// missing filter can never wipe the index.
	DeleteWhere(ctx context.Context, filter Filter) (int, error)
	// Query returns up to k records matching filter, most similar to vector
	// first; equal scores are ordered by ID. k == 0 returns nothing, k < 0
	// is an error.
	Query(ctx context.Context, vector []float32, k int, filter Filter) ([]Hit, error)
	// Count returns the number of records.
	Count(ctx context.Context) (int, error)
}

// Lister is an optional ability of a Writer or Index: the IDs of the
// records matching a filter, without their vectors, metadata or texts. The
// engine lists a page's records with it after each upsert, to delete those
// of versions a crash left written but never committed; a Writer without
// it is asked with Query when it has that method.
type Lister interface {
	// IDs returns the IDs of up to limit records matching filter, in ID
	// order. An empty filter matches every record; limit < 0 is an error.
	IDs(ctx context.Context, filter Filter, limit int) ([]string, error)
}

// ErrEmptyFilter is returned by DeleteWhere when the filter is empty.
var ErrEmptyFilter = errors.New("index: DeleteWhere needs a non-empty filter (use Delete with IDs to remove everything)")

// DimensionError reports a vector whose length differs from the index's.
type DimensionError struct {
	ID        string // the record's ID; empty for a query vector
	Want, Got int
}

// Error implements error.
func (e *DimensionError) Error() string {
	what := "query vector"
	if e.ID != "" {
		what = fmt.Sprintf("record %q", e.ID)
	}
	return fmt.Sprintf("index: %s has %d dimensions, the index has %d (vectors of one index must come from one embedding model)", what, e.Got, e.Want)
}

// RecordError reports a record (or query) that cannot be stored or used:
// an empty ID, or a vector holding NaN or infinity.
type RecordError struct {
	ID     string
	Reason string
}

// Error implements error.
func (e *RecordError) Error() string {
	if e.ID == "" {
		return "index: " + e.Reason
	}
	return fmt.Sprintf("index: record %q: %s", e.ID, e.Reason)
}

// CorruptError reports a snapshot that cannot be read: wrong magic, an
// unknown version, truncation, a checksum mismatch or impossible values.
// The snapshot is not usable; restore an older copy or rebuild the index.
type CorruptError struct {
	Path   string // the file, when read from one
	Offset int64  // bytes read when the problem was found
	Reason string
	Err    error // underlying error, e.g. io.ErrUnexpectedEOF
}

// Error implements error.
func (e *CorruptError) Error() string {
	where := "snapshot"
	if e.Path != "" {
		where = fmt.Sprintf("snapshot %s", e.Path)
	}
	s := fmt.Sprintf("index: corrupt %s at byte %d: %s", where, e.Offset, e.Reason)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	return s
}

// Unwrap returns the underlying error.
func (e *CorruptError) Unwrap() error { return e.Err }
