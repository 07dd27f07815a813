package sqlitevec

import "errors"

// ErrUnavailable is wrapped by Open's error in a build without cgo or
// without the sqlite_fts5 build tag: the index needs both (see the
// package documentation).
var ErrUnavailable = errors.New("sqlitevec: this build has no SQLite with sqlite-vec and FTS5")
