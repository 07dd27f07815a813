package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/extract"
)

// manifestName is the file that marks a directory as the output of one
// source (site), so a second site's run cannot mix its pages in.
const manifestName = ".docsindex.json"

// manifestVersion is the current manifest format. Version 1 also listed
// every file with its hash; that list is no longer read, and a version 1
// manifest is rewritten as version 2 on the first write.
const manifestVersion = 2

// manifest is the output directory's marker.
type manifest struct {
	Version int    `json:"version"`
	Source  string `json:"source"`
}

// markdownTypes are the content types whose documents the engine turns
// into Markdown, one per file extension DocPath gives them (md, txt): the
// only extensions a page's file can have.
var markdownTypes = [...]string{"text/html", "text/plain"}

// docs is the output directory. Its hook is called by up to Workers
// goroutines at once: writes share mu, removals (which may delete
// directories a write is about to use) hold it alone.
type docs struct {
	dir    string
	source string

	claimMu sync.Mutex
	claimed bool // the manifest names source, at the current version

	mu sync.RWMutex

	written, removed atomic.Int64

	errMu    sync.Mutex
	firstErr error // the first failure of the hook, naming its page
}

// openDocs creates dir if needed and reads its manifest. A manifest of
// another source is an error: one directory holds one site.
func openDocs(dir, source string) (*docs, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	d := &docs{dir: dir, source: source}
	path := filepath.Join(dir, manifestName)
	raw, err := os.ReadFile(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return d, nil
	case err != nil:
		return nil, fmt.Errorf("reading the manifest: %w", err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s is not a docsindex manifest (%v); remove it to rebuild the directory", path, err)
	}
	if m.Version != 1 && m.Version != manifestVersion {
		return nil, fmt.Errorf("%s has version %d, want %d; remove it to rebuild the directory", path, m.Version, manifestVersion)
	}
	if m.Source == "" {
		return nil, fmt.Errorf("%s names no source; remove it to rebuild the directory", path)
	}
	if m.Source != source {
		return nil, fmt.Errorf("%s holds the pages of %s, not %s: use another -out directory", dir, m.Source, source)
	}
	d.claimed = m.Version == manifestVersion
	return d, nil
}

// claim writes the manifest before the first file, so a run that writes
// nothing (a wrong entry URL) does not claim the directory for its source.
func (d *docs) claim() error {
	d.claimMu.Lock()
	defer d.claimMu.Unlock()
	if d.claimed {
		return nil
	}
	raw, err := json.Marshal(manifest{Version: manifestVersion, Source: d.source})
	if err != nil {
		return err
	}
	if err := writeAtomic(filepath.Join(d.dir, manifestName), append(raw, '\n')); err != nil {
		return err
	}
	d.claimed = true
	return nil
}

// onContent is the engine's Config.OnContent: it writes the page's
// Markdown to its file, or removes the file of a gone page. It runs before
// the engine commits the page, so an error leaves the page due and the
// next run hands it over again.
func (d *docs) onContent(_ context.Context, c recrawl.Content) error {
	var err error
	if c.Outcome == recrawl.OutcomeGone {
		err = d.remove(c.URL)
	} else {
		err = d.put(c.URL, c.ContentType, c.Markdown)
	}
	if err != nil {
		err = fmt.Errorf("%s: %w", c.URL, err)
		d.errMu.Lock()
		if d.firstErr == nil {
			d.firstErr = err
		}
		d.errMu.Unlock()
	}
	return err
}

// failure returns the hook's first error, or nil.
func (d *docs) failure() error {
	d.errMu.Lock()
	defer d.errMu.Unlock()
	return d.firstErr
}

// docType is the content type a page's file is named by: a missing or
// unparsable Content-Type is read as HTML by the engine, and so stored as
// Markdown (.md), not as .bin.
func docType(contentType string) string {
	if mt, _, err := mime.ParseMediaType(contentType); err != nil || mt == "" {
		return "text/html"
	}
	return contentType
}

// docPath is the file of page url (its normalized URL, the page's identity
// in the state) for a response of contentType, relative and
// slash-separated.
func docPath(url, contentType string) string {
	return extract.DocPath(url, docType(contentType))
}

// abs returns the path of rel inside the output directory, refusing one
// that leaves it (DocPath never gives one; this is the last guard before
// a write or a removal).
func (d *docs) abs(rel string) (string, error) {
	p := filepath.FromSlash(rel)
	if !filepath.IsLocal(p) {
		return "", fmt.Errorf("document path %q leaves the output directory", rel)
	}
	return filepath.Join(d.dir, p), nil
}

// put makes page url's file hold md. A file that already holds md is left
// alone (its modification time says when the page last changed), and a
// file of the page under the other extension (its content type changed) is
// removed.
func (d *docs) put(url, contentType, md string) error {
	if err := d.claim(); err != nil {
		return err
	}
	rel := docPath(url, contentType)
	full, err := d.abs(rel)
	if err != nil {
		return err
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	if !holds(full, md) {
		if err := writeAtomic(full, []byte(md)); err != nil {
			return err
		}
		d.written.Add(1)
	}
	for _, t := range markdownTypes {
		if other := docPath(url, t); other != rel {
			// Same directory as rel, which is not empty now: no directory
			// is removed, so the shared lock is enough.
			p, err := d.abs(other)
			if err != nil {
				return err
			}
			if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}

// holds reports whether the file at path holds exactly md.
func holds(path, md string) bool {
	st, err := os.Stat(path)
	if err != nil || !st.Mode().IsRegular() || st.Size() != int64(len(md)) {
		return false
	}
	b, err := os.ReadFile(path)
	return err == nil && string(b) == md
}

// remove deletes the file of page url, under whichever extension it has,
// and the directories that leaves empty.
func (d *docs) remove(url string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, t := range markdownTypes {
		full, err := d.abs(docPath(url, t))
		if err != nil {
			return err
		}
		err = os.Remove(full)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			continue
		case err != nil:
			return err
		}
		d.removed.Add(1)
		d.prune(filepath.Dir(full))
	}
	return nil
}

// prune removes dir and its parents while they are empty, up to (not
// including) the output directory.
func (d *docs) prune(dir string) {
	root := filepath.Clean(d.dir)
	for ; dir != root && len(dir) > len(root); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil { // not empty, or gone already
			return
		}
	}
}

// present reports whether page url has a file, under either extension.
func (d *docs) present(url string) bool {
	for _, t := range markdownTypes {
		full, err := d.abs(docPath(url, t))
		if err != nil {
			continue
		}
		if st, err := os.Stat(full); err == nil && st.Mode().IsRegular() {
			return true
		}
	}
	return false
}

// everything is a due-queue horizon that holds every row.
var everything = time.Unix(1<<40, 0)

// coverage counts the pages of source the state holds content for (not
// gone, not aliases) and how many of them have a file. The engine hands a
// page over only when it answers with a body, so a page that answers 304
// keeps whatever file it has, or none (a new -out directory for an old
// -db).
func (d *docs) coverage(ctx context.Context, st crawlstate.State, source string) (pages, present int, err error) {
	const pageSize = 500
	var after crawlstate.Key
	for {
		rows, err := st.Due(ctx, source, everything, after, pageSize)
		if err != nil {
			return 0, 0, fmt.Errorf("listing pages: %w", err)
		}
		for _, r := range rows {
			if r.ContentHash == "" || r.Gone || r.AliasOf != "" {
				continue
			}
			pages++
			if d.present(r.URL) {
				present++
			}
		}
		if len(rows) < pageSize {
			return pages, present, nil
		}
		after = crawlstate.KeyOf(rows[len(rows)-1])
	}
}

// writeAtomic replaces path with data through a temporary file in the same
// directory, so a reader never sees half a file.
func writeAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	_, werr := f.Write(data)
	cerr := f.Close()
	if werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Chmod(f.Name(), 0o644)
	}
	if werr == nil {
		werr = os.Rename(f.Name(), path)
	}
	if werr != nil {
		os.Remove(f.Name())
		return fmt.Errorf("writing %s: %w", path, werr)
	}
	return nil
}
