package llmstxt_test

import (
	"errors"
	"fmt"

	"github.com/recrawl/recrawl/llmstxt"
)

const exampleFile = `# Example Docs

> Example is a library for keeping documentation fresh.

Read the quick start first.

## Docs

- [Quick start](/docs/start.md): Install and run
- [API reference](https://example.com/docs/api.md)
- [Quick start, again](/docs/start.md#install): a duplicate

## Optional

- [Changelog](/changelog.md)
- [Contact](mailto:team@example.com)
`

func ExampleParse() {
	f, err := llmstxt.Parse([]byte(exampleFile))
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("title:", f.Title)
	fmt.Println("summary:", f.Summary)
	fmt.Println("details:", f.Details)
	for _, s := range f.Sections {
		fmt.Printf("section %q optional=%v links=%d\n", s.Name, s.Optional, len(s.Links))
	}
	first := f.Sections[0].Links[0]
	fmt.Printf("first link: %q %s %q\n", first.Title, first.URL, first.Description)

	_, err = llmstxt.Parse([]byte("<!DOCTYPE html>\n<html><body><h1>Docs</h1></body></html>\n"))
	fmt.Println(errors.Is(err, llmstxt.ErrNoTitle), errors.Is(err, llmstxt.ErrHTML))
	// Output:
	// title: Example Docs
	// summary: Example is a library for keeping documentation fresh.
	// details: Read the quick start first.
	// section "Docs" optional=false links=3
	// section "Optional" optional=true links=2
	// first link: "Quick start" /docs/start.md "Install and run"
	// true true
}

func ExampleFile_Pages() {
	f, err := llmstxt.Parse([]byte(exampleFile))
	if err != nil {
		fmt.Println(err)
		return
	}
	// Duplicates (the #install link) and mailto: links are left out;
	// relative URLs stay relative.
	for _, p := range f.Pages() {
		fmt.Println(p.URL)
	}
	// Output:
	// /docs/start.md
	// https://example.com/docs/api.md
	// /changelog.md
}

func ExampleParser_Parse() {
	p := llmstxt.Parser{MaxBytes: 64}
	_, err := p.Parse([]byte(exampleFile))
	fmt.Println(errors.Is(err, llmstxt.ErrTooLarge))
	var fe *llmstxt.FormatError
	if errors.As(err, &fe) {
		fmt.Println(fe.Detail)
	}
	// Output:
	// true
	// 351 bytes, more than the 64-byte limit; raise Parser.MaxBytes if the file is genuine
}
