//go:build !cgo

package sqlite

import (
	"database/sql"

	"github.com/mattn/go-sqlite3"
)

// Without cgo go-sqlite3 registers a driver that fails to open any
// database with its own clear error ("requires cgo"); the state's driver
// names lead to it, so Open returns that error.
func init() {
	sql.Register(writerDriver, &sqlite3.SQLiteDriver{})
	sql.Register(readerDriver, &sqlite3.SQLiteDriver{})
}
