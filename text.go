package recrawl

import (
	"bytes"
	"errors"
	"fmt"
	"mime"
	"strings"

	"golang.org/x/net/html"

	"github.com/recrawl/recrawl/fetch"
)

// errNoText is a page without readable text.
var errNoText = errors.New("no readable text")

// pageText returns the text of a response that is fingerprinted.
func pageText(resp *fetch.Response) (string, error) {
	mt, _, _ := mime.ParseMediaType(resp.ContentType)
	var text string
	switch {
	case mt == "text/markdown" || mt == "text/plain":
		text = string(resp.Body)
	case mt == "" || mt == "text/html" || mt == "application/xhtml+xml":
		text = htmlText(resp.Body)
	default:
		return "", fmt.Errorf("unsupported content type %q", resp.ContentType)
	}
	if strings.TrimSpace(text) == "" {
		return "", errNoText
	}
	return text, nil
}

// htmlText is the text of an HTML document without scripts, styles and
// markup, one block per line.
func htmlText(body []byte) string {
	z := html.NewTokenizer(bytes.NewReader(body))
	var b strings.Builder
	skip := 0
	for {
		switch z.Next() {
		case html.ErrorToken:
			return b.String()
		case html.StartTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "script", "style", "noscript", "template":
				skip++
			case "p", "div", "li", "h1", "h2", "h3", "h4", "h5", "h6", "tr", "pre", "br":
				b.WriteByte('\n')
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			switch string(name) {
			case "script", "style", "noscript", "template":
				if skip > 0 {
					skip--
				}
			}
		case html.TextToken:
			if skip == 0 {
				b.Write(z.Text())
			}
		}
	}
}
