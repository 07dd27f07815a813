package main

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/discover"
)

// pages keeps, in the state's SQLite file, what the server adds to the
// state: the sources it serves and each page's Markdown. The state keeps
// a page's chunks, not its Markdown; the engine hands the Markdown to
// Config.OnContent before it commits the page, so a page here is never
// older than the state's hash of it.
type pages struct {
	db *sql.DB
}

const pagesSchema = `
CREATE TABLE IF NOT EXISTS docsmcp_sources (
	name     TEXT NOT NULL PRIMARY KEY,
	url      TEXT NOT NULL,
	format   TEXT NOT NULL,
	added_at INTEGER NOT NULL -- Unix nanoseconds
);
CREATE TABLE IF NOT EXISTS docsmcp_pages (
	source     TEXT NOT NULL,
	url        TEXT NOT NULL,
	title      TEXT NOT NULL,
	hash       TEXT NOT NULL,
	fetched_at INTEGER NOT NULL, -- Unix nanoseconds
	markdown   TEXT NOT NULL,
	PRIMARY KEY (source, url)
);
CREATE INDEX IF NOT EXISTS docsmcp_pages_url ON docsmcp_pages (url);
`

// openPages opens the server's tables in the file at path (the state
// must have opened it first: the state refuses a file that holds other
// tables but no recrawl mark).
func openPages(ctx context.Context, path string) (*pages, error) {
	db, err := sql.Open("sqlite3", "file:"+(&url.URL{Path: path}).EscapedPath()+"?_busy_timeout=5000&_txlock=immediate")
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, pagesSchema); err != nil {
		db.Close()
		return nil, fmt.Errorf("docsmcp tables in %s: %w", path, err)
	}
	return &pages{db: db}, nil
}

func (p *pages) Close() error { return p.db.Close() }

// source is one documentation site the server serves.
type source struct {
	Name    string
	URL     string
	Format  discover.Format
	AddedAt time.Time
}

// entry is the source as the engine runs it.
func (s source) entry() discover.Entry {
	return discover.Entry{URL: s.URL, Format: s.Format, SourceName: s.Name}
}

// errExists is returned by addSource for a name already taken.
var errExists = errors.New("a source of that name exists")

func (p *pages) addSource(ctx context.Context, s source) error {
	res, err := p.db.ExecContext(ctx, `INSERT INTO docsmcp_sources (name, url, format, added_at) VALUES (?, ?, ?, ?) ON CONFLICT (name) DO NOTHING`,
		s.Name, s.URL, string(s.Format), s.AddedAt.UnixNano())
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return cmpErr(err, errExists)
	}
	return nil
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// sources lists the sources by name.
func (p *pages) sources(ctx context.Context) ([]source, error) {
	rows, err := p.db.QueryContext(ctx, `SELECT name, url, format, added_at FROM docsmcp_sources ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []source
	for rows.Next() {
		var s source
		var f string
		var at int64
		if err := rows.Scan(&s.Name, &s.URL, &f, &at); err != nil {
			return nil, err
		}
		s.Format, s.AddedAt = discover.Format(f), time.Unix(0, at).UTC()
		out = append(out, s)
	}
	return out, rows.Err()
}

// onContent is the engine's Config.OnContent: it stores a page's
// Markdown, or forgets a gone page.
func (p *pages) onContent(ctx context.Context, c recrawl.Content) error {
	if c.Outcome == recrawl.OutcomeGone {
		_, err := p.db.ExecContext(ctx, `DELETE FROM docsmcp_pages WHERE source = ? AND url = ?`, c.Source, c.URL)
		return err
	}
	_, err := p.db.ExecContext(ctx, `
INSERT INTO docsmcp_pages (source, url, title, hash, fetched_at, markdown) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT (source, url) DO UPDATE SET title = excluded.title, hash = excluded.hash, fetched_at = excluded.fetched_at, markdown = excluded.markdown`,
		c.Source, c.URL, c.Title, c.Hash, c.At.UnixNano(), c.Markdown)
	return err
}

// page is one stored page.
type page struct {
	Source, URL, Title, Hash, Markdown string
	FetchedAt                          time.Time
}

// page returns the stored page at a canonical URL (of any source);
// ok is false when none is stored.
func (p *pages) page(ctx context.Context, u string) (page, bool, error) {
	var pg page
	var at int64
	err := p.db.QueryRowContext(ctx, `SELECT source, url, title, hash, fetched_at, markdown FROM docsmcp_pages WHERE url = ? ORDER BY source LIMIT 1`, u).
		Scan(&pg.Source, &pg.URL, &pg.Title, &pg.Hash, &at, &pg.Markdown)
	if errors.Is(err, sql.ErrNoRows) {
		return page{}, false, nil
	}
	if err != nil {
		return page{}, false, err
	}
	pg.FetchedAt = time.Unix(0, at).UTC()
	return pg, true, nil
}

// count returns how many pages of source have their Markdown stored.
func (p *pages) count(ctx context.Context, src string) (int, error) {
	var n int
	err := p.db.QueryRowContext(ctx, `SELECT count(*) FROM docsmcp_pages WHERE source = ?`, src).Scan(&n)
	return n, err
}
