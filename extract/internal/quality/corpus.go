package quality

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// Page is one benchmark page: its raw HTML and the reference article text.
type Page struct {
	ID    string
	URL   string
	HTML  []byte
	Truth string
}

// LoadCorpus reads a benchmark directory holding html/<id>.html.gz and
// ground-truth.json (or ground-truth.json.gz), sorted by ID.
func LoadCorpus(dir string) ([]Page, error) {
	truth, err := readTruth(dir)
	if err != nil {
		return nil, err
	}
	pages := make([]Page, 0, len(truth))
	for id, gt := range truth {
		body, err := readGzip(filepath.Join(dir, "html", id+".html.gz"))
		if err != nil {
			return nil, fmt.Errorf("quality: page %s: %w", id, err)
		}
		pages = append(pages, Page{ID: id, URL: gt.URL, HTML: body, Truth: gt.ArticleBody})
	}
	sort.Slice(pages, func(i, j int) bool { return pages[i].ID < pages[j].ID })
	return pages, nil
}

type truthEntry struct {
	ArticleBody string `json:"articleBody"`
	URL         string `json:"url"`
}

func readTruth(dir string) (map[string]truthEntry, error) {
	var raw []byte
	var err error
	if plain := filepath.Join(dir, "ground-truth.json"); fileExists(plain) {
		raw, err = os.ReadFile(plain)
	} else {
		raw, err = readGzip(filepath.Join(dir, "ground-truth.json.gz"))
	}
	if err != nil {
		return nil, fmt.Errorf("quality: ground truth: %w", err)
	}
	var truth map[string]truthEntry
	if err := json.Unmarshal(raw, &truth); err != nil {
		return nil, fmt.Errorf("quality: ground truth is not the benchmark's JSON object: %w", err)
	}
	if len(truth) == 0 {
		return nil, fmt.Errorf("quality: ground truth in %s lists no pages", dir)
	}
	return truth, nil
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func readGzip(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	defer zr.Close()
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return b, nil
}

// Evaluate scores every page with extractText, which returns the predicted
// article as plain text (pass Markdown through MarkdownText first). A page
// whose extraction fails scores as an empty prediction.
func Evaluate(pages []Page, extractText func(Page) (string, error)) (Metrics, []Counts) {
	counts := make([]Counts, len(pages))
	for i, p := range pages {
		text, err := extractText(p)
		if err != nil {
			text = ""
		}
		counts[i] = Score(p.Truth, text)
	}
	return Summarize(counts), counts
}
