//go:build !cgo

package sqlite

// isBusy reports whether err is SQLite's SQLITE_BUSY. Without cgo the
// driver opens no database, so no error is ever SQLite's.
func isBusy(error) bool { return false }
