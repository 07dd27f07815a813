package llmstxt_test

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/recrawl/recrawl/llmstxt"
)

// FuzzParse checks that Parse never panics or hangs, that every error is a
// *FormatError, and that a parsed File is consistent with its own Pages.
func FuzzParse(f *testing.F) {
	for _, p := range corpus(f) {
		data, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range []string{
		"",
		"# T\n",
		"<!DOCTYPE html><html><h1>x</h1></html>",
		"# T\n> s\n\n```\n[a](b)\n```\n## S\n- [x [y]](z): d\n- <https://a.b>\n[r]: /r\n[r]\n",
		"# T\n\n" + strings.Repeat("> ", 40) + "x\n",
		"# T\n\n" + strings.Repeat("[a](", 200) + "\n",
		"\xef\xbb\xbf# T\r\n- [a](b)\r\n",
		"# T\n\n-[a](b)\n**[c](d)**: e\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := llmstxt.Parse(data)
		if err != nil {
			var fe *llmstxt.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("error is %T, not *FormatError: %v", err, err)
			}
			if file != nil {
				t.Fatal("a File returned with an error")
			}
			return
		}
		if file.Title == "" {
			t.Fatal("parsed without a title")
		}
		if file.Details != "" && !strings.Contains(string(data), file.Details) {
			t.Fatal("Details is not source text of the document")
		}
		all := make(map[string]bool)
		for _, l := range file.Links {
			all[l.URL] = true
		}
		for _, s := range file.Sections {
			for _, l := range s.Links {
				all[l.URL] = true
			}
		}
		seen := make(map[string]bool)
		for _, p := range file.Pages() {
			key, _, _ := strings.Cut(p.URL, "#")
			if seen[key] {
				t.Fatalf("page %q returned twice", p.URL)
			}
			seen[key] = true
			if !all[p.URL] {
				t.Fatalf("page %q is not one of the file's links", p.URL)
			}
			if p.URL == "" || strings.HasPrefix(p.URL, "#") || strings.HasPrefix(strings.ToLower(p.URL), "mailto:") {
				t.Fatalf("non-page URL %q returned", p.URL)
			}
		}
	})
}
