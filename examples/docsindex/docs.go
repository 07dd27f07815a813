package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/extract"
	"github.com/recrawl/recrawl/fingerprint"
)

// manifestName is the file in the output directory that remembers which
// file holds which page, and the content hash of what it holds.
const manifestName = ".docsindex.json"

const manifestVersion = 1

// manifest is the output directory's record of its files.
type manifest struct {
	Version int    `json:"version"`
	Source  string `json:"source"`
	// Files maps a page's normalized URL to its file.
	Files map[string]fileEntry `json:"files"`
}

// fileEntry is one written page.
type fileEntry struct {
	Path        string `json:"path"` // relative to the output directory, slash-separated (extract.DocPath)
	Hash        string `json:"hash"` // the engine's content hash of the Markdown the file holds
	ContentType string `json:"content_type"`
}

// docs is the output directory: Markdown files and their manifest. Its
// methods are safe for concurrent use.
type docs struct {
	dir         string
	fingerprint fingerprint.Set // the engine's Config.Fingerprint

	mu      sync.Mutex
	man     manifest
	dirty   bool // the manifest changed since it was read
	written int
	removed int
}

// openDocs creates dir if needed and reads its manifest. A manifest of
// another source is an error: one directory holds one site.
func openDocs(dir, source string, fp fingerprint.Set) (*docs, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}
	d := &docs{dir: dir, fingerprint: fp, man: manifest{Version: manifestVersion, Source: source, Files: map[string]fileEntry{}}}
	raw, err := os.ReadFile(filepath.Join(dir, manifestName))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return d, nil
	case err != nil:
		return nil, fmt.Errorf("reading the manifest: %w", err)
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("%s is not a docsindex manifest (%v); remove it to rebuild the directory", filepath.Join(dir, manifestName), err)
	}
	if m.Version != manifestVersion {
		return nil, fmt.Errorf("%s has version %d, want %d; remove it to rebuild the directory", filepath.Join(dir, manifestName), m.Version, manifestVersion)
	}
	if m.Source != source {
		return nil, fmt.Errorf("%s holds the pages of %s, not %s: use another -out directory", dir, m.Source, source)
	}
	if m.Files == nil {
		m.Files = map[string]fileEntry{}
	}
	for u, e := range m.Files {
		// Removing a gone page's file must never reach outside dir.
		if e.Path == "" || !filepath.IsLocal(filepath.FromSlash(e.Path)) {
			return nil, fmt.Errorf("%s: the file of %s, %q, is not inside the directory; remove the manifest to rebuild the directory", filepath.Join(dir, manifestName), u, e.Path)
		}
	}
	d.man = m
	return d, nil
}

// save writes the manifest atomically, when it changed: a run that
// wrote nothing does not claim an empty directory for its source.
func (d *docs) save() error {
	d.mu.Lock()
	if !d.dirty {
		d.mu.Unlock()
		return nil
	}
	raw, err := json.MarshalIndent(d.man, "", "  ")
	d.mu.Unlock()
	if err != nil {
		return err
	}
	return writeAtomic(filepath.Join(d.dir, manifestName), append(raw, '\n'))
}

// entry returns the manifest entry of url.
func (d *docs) entry(url string) (fileEntry, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	e, ok := d.man.Files[url]
	return e, ok
}

// urls lists the pages the manifest holds, sorted.
func (d *docs) urls() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := make([]string, 0, len(d.man.Files))
	for u := range d.man.Files {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

// present reports whether e's file is on disk.
func (d *docs) present(e fileEntry) bool {
	_, err := os.Stat(filepath.Join(d.dir, filepath.FromSlash(e.Path)))
	return err == nil
}

// errNotReproduced means the Markdown made from a captured or refetched
// body does not have the content hash the engine committed, so it is not
// the Markdown the engine fingerprinted, and is not written.
var errNotReproduced = errors.New("the Markdown does not reproduce the engine's content hash")

// put writes the Markdown of page url, made from body, when it reproduces
// hash, the content hash the engine committed for the page. A page whose
// file moved (its content type changed the extension) loses its old file.
func (d *docs) put(url, hash, finalURL, contentType string, body []byte, maxBytes int64) error {
	md, err := markdownOf(body, finalURL, contentType, maxBytes)
	if err != nil {
		return err
	}
	if got := d.fingerprint.For(url).Of(md); got != hash {
		return fmt.Errorf("%w (%.12s, committed %.12s)", errNotReproduced, got, hash)
	}
	rel := extract.DocPath(url, contentType)
	if !filepath.IsLocal(filepath.FromSlash(rel)) {
		return fmt.Errorf("document path %q leaves the output directory", rel)
	}
	if err := writeAtomic(filepath.Join(d.dir, filepath.FromSlash(rel)), []byte(md)); err != nil {
		return err
	}
	d.mu.Lock()
	old, had := d.man.Files[url]
	d.man.Files[url] = fileEntry{Path: rel, Hash: hash, ContentType: contentType}
	d.written++
	d.dirty = true
	d.mu.Unlock()
	if had && old.Path != rel {
		return d.unlink(old.Path)
	}
	return nil
}

// remove deletes the file of page url, if the manifest has one.
func (d *docs) remove(url string) error {
	d.mu.Lock()
	e, ok := d.man.Files[url]
	delete(d.man.Files, url)
	if ok {
		d.removed++
		d.dirty = true
	}
	d.mu.Unlock()
	if !ok {
		return nil
	}
	return d.unlink(e.Path)
}

// unlink removes a file and the directories it leaves empty, up to (not
// including) the output directory.
func (d *docs) unlink(rel string) error {
	full := filepath.Join(d.dir, filepath.FromSlash(rel))
	if err := os.Remove(full); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	root := filepath.Clean(d.dir)
	for dir := filepath.Dir(full); dir != root && len(dir) > len(root); dir = filepath.Dir(dir) {
		if os.Remove(dir) != nil { // not empty, or gone already
			break
		}
	}
	return nil
}

// counts returns how many files this run wrote and removed, and how many
// the directory holds.
func (d *docs) counts() (written, removed, total int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.written, d.removed, len(d.man.Files)
}

// markdownOf turns a response body into Markdown as the engine's extract
// stage does: HTML (or no content type) through extract with the response's
// Content-Type and the WEB_MAX_BYTES cap, Markdown and plain text as they
// are. The caller checks the result against the committed content hash, so
// a divergence from the engine is caught, never written.
func markdownOf(body []byte, pageURL, contentType string, maxBytes int64) (string, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch mt {
	case "text/markdown", "text/x-markdown", "text/plain":
		return string(body), nil
	case "", "text/html", "application/xhtml+xml":
		doc, err := extract.FromHTMLWithOptions(body, pageURL, extract.Options{ContentType: contentType, MaxBytes: int(maxBytes)})
		return doc.Markdown, err
	}
	return "", fmt.Errorf("%w %q", recrawl.ErrUnsupportedType, contentType)
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
