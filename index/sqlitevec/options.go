package sqlitevec

import (
	"log/slog"
	"time"

	"github.com/recrawl/recrawl/index"
)

// Options configures Open.
type Options struct {
	// Dimensions is the vector length of the index. 0 leaves it to the
	// file (an index created before) or to the first upserted record.
	// A file whose index has another length is refused.
	Dimensions int
	// BusyTimeout is how long a statement waits for another connection
	// or process holding the file's write lock, such as crawlstate/sqlite
	// committing a batch (default 5s).
	BusyTimeout time.Duration
	// ReadConns is the size of the read-only connection pool that
	// queries use (default 4).
	ReadConns int
	// Candidates is how many records the coarse search hands the exact
	// rerank per hit asked for (default 4; see Search). More is slower and
	// closer to exact.
	Candidates int
	// Logger receives diagnostics (default: discard).
	Logger *slog.Logger
}

// DefaultBusyTimeout is Options.BusyTimeout's default.
const DefaultBusyTimeout = 5 * time.Second

// SearchQuery is a hybrid query: the records nearest to Vector and the
// best keyword matches of Text, fused. Either may be empty, not both.
type SearchQuery struct {
	// Text is free text: its words are matched against the records'
	// texts (FTS5, BM25 ranking, Porter stemming: "indexing" finds
	// "indexed"). Operators and quotes in it are plain characters.
	Text string
	// Vector is the query's embedding, from the embedder the records'
	// vectors came from (nil: keyword search only).
	Vector []float32
	// K is how many hits to return (0: none; at most MaxK).
	K int
	// Filter selects records by metadata equality, as index.Filter does.
	Filter index.Filter
}

// MaxK is the most hits one Search returns.
const MaxK = 1000

// Hit is one result of Search: the record, its rank in the vector list
// and in the keyword list (from 1; 0 when it was not in that list), and
// the fused score. Score is the cosine similarity to the query vector (0
// without one).
type Hit struct {
	index.Hit
	VectorRank, TextRank int
	// Fused is the reciprocal rank fusion score: the sum over both lists
	// of 1/(RRFConstant + rank).
	Fused float64
}
