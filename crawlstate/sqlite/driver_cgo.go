//go:build cgo

package sqlite

import (
	"database/sql"
	"strconv"

	"github.com/mattn/go-sqlite3"
)

func init() {
	sql.Register(writerDriver, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		if err := c.RegisterFunc("recrawl_event_key", eventKey, true); err != nil {
			return err
		}
		if c.GetFilename("main") == "" { // in memory
			return nil
		}
		_, err := c.Exec("PRAGMA page_size = "+strconv.Itoa(newPageSize)+"; PRAGMA journal_mode = WAL", nil)
		return err
	}})
	sql.Register(readerDriver, &sqlite3.SQLiteDriver{ConnectHook: func(c *sqlite3.SQLiteConn) error {
		_, err := c.Exec("PRAGMA mmap_size = "+strconv.Itoa(readerMmapBytes), nil)
		return err
	}})
}
