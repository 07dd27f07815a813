package main

import (
	"bytes"
	"flag"
	"fmt"
	"net/url"
	"os"
	"time"

	readability "codeberg.org/readeck/go-readability/v2"
	"github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/base"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/commonmark"
	"github.com/JohannesKaufmann/html-to-markdown/v2/plugin/table"
	"github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"

	"github.com/recrawl/recrawl/extract"
	"github.com/recrawl/recrawl/extract/internal/quality"
)

func main() {
	dir := flag.String("corpus", "extract/testdata/benchmark", "benchmark directory")
	page := flag.String("page", "", "print each extractor's Markdown for this HTML file instead")
	pageURL := flag.String("url", "https://example.com/", "URL of -page")
	flag.Parse()
	if os.Getenv("DIFF") != "" {
		diffModes(*dir)
		return
	}
	if *page != "" {
		showPage(*page, *pageURL)
		return
	}
	pages, err := quality.LoadCorpus(*dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin()))
	run := func(name string, f func(quality.Page) (string, error)) {
		start := time.Now()
		m, _ := quality.Evaluate(pages, f)
		fmt.Printf("%-28s P=%.3f R=%.3f F1=%.3f  %v/page\n", name, m.Precision, m.Recall, m.F1, time.Since(start)/time.Duration(len(pages)))
	}
	run("pipeline (extract.FromHTML)", func(p quality.Page) (string, error) {
		d, err := extract.FromHTML(p.HTML, p.URL)
		return quality.MarkdownText(d.Markdown), err
	})
	if os.Getenv("ONLY") != "" {
		return
	}
	run("readability text", func(p quality.Page) (string, error) {
		u, _ := url.Parse(p.URL)
		doc, err := html.Parse(bytes.NewReader(p.HTML))
		if err != nil {
			return "", err
		}
		ps := readability.NewParser()
		a, err := ps.ParseAndMutate(doc, u)
		if err != nil {
			return "", err
		}
		var b bytes.Buffer
		err = a.RenderText(&b)
		return b.String(), err
	})
	run("readability md", func(p quality.Page) (string, error) {
		u, _ := url.Parse(p.URL)
		doc, err := html.Parse(bytes.NewReader(p.HTML))
		if err != nil {
			return "", err
		}
		ps := readability.NewParser()
		a, err := ps.ParseAndMutate(doc, u)
		if err != nil || a.Node == nil {
			return "", err
		}
		md, err := conv.ConvertNode(a.Node, converter.WithDomain(p.URL))
		return quality.MarkdownText(string(md)), err
	})
	run("trafilatura text (fallback)", func(p quality.Page) (string, error) {
		u, _ := url.Parse(p.URL)
		doc, err := html.Parse(bytes.NewReader(p.HTML))
		if err != nil {
			return "", err
		}
		r, err := trafilatura.ExtractDocument(doc, trafilatura.Options{EnableFallback: true, OriginalURL: u})
		if err != nil {
			return "", err
		}
		return r.ContentText, nil
	})
	run("trafilatura md (fallback)", func(p quality.Page) (string, error) {
		u, _ := url.Parse(p.URL)
		doc, err := html.Parse(bytes.NewReader(p.HTML))
		if err != nil {
			return "", err
		}
		r, err := trafilatura.ExtractDocument(doc, trafilatura.Options{EnableFallback: true, OriginalURL: u, IncludeLinks: true})
		if err != nil {
			return "", err
		}
		md, err := conv.ConvertNode(r.ContentNode, converter.WithDomain(p.URL))
		return quality.MarkdownText(string(md)), err
	})
	run("trafilatura md (no fallback)", func(p quality.Page) (string, error) {
		u, _ := url.Parse(p.URL)
		doc, err := html.Parse(bytes.NewReader(p.HTML))
		if err != nil {
			return "", err
		}
		r, err := trafilatura.ExtractDocument(doc, trafilatura.Options{OriginalURL: u, IncludeLinks: true, HtmlDateMode: trafilatura.Disabled})
		if err != nil {
			return "", err
		}
		md, err := conv.ConvertNode(r.ContentNode, converter.WithDomain(p.URL))
		return quality.MarkdownText(string(md)), err
	})
}

func showPage(file, pageURL string) {
	body, err := os.ReadFile(file)
	if err != nil {
		panic(err)
	}
	d, err := extract.FromHTML(body, pageURL)
	fmt.Printf("===== pipeline err=%v title=%q canonical=%q lang=%q desc=%q links=%d\n%s\n", err, d.Title, d.Canonical, d.Lang, d.Description, len(d.Links), d.Markdown)
	if os.Getenv("ONLY") != "" {
		return
	}
	conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin()))
	u, _ := url.Parse(pageURL)
	doc, _ := html.Parse(bytes.NewReader(body))
	ps := readability.NewParser()
	a, err := ps.ParseAndMutate(doc, u)
	fmt.Println("===== readability", err)
	if a.Node != nil {
		md, _ := conv.ConvertNode(a.Node, converter.WithDomain(pageURL))
		fmt.Println(string(md))
	}
	doc, _ = html.Parse(bytes.NewReader(body))
	r, err := trafilatura.ExtractDocument(doc, trafilatura.Options{OriginalURL: u, IncludeLinks: true, HtmlDateMode: trafilatura.Disabled})
	fmt.Println("===== trafilatura", err)
	if r != nil {
		md, _ := conv.ConvertNode(r.ContentNode, converter.WithDomain(pageURL))
		fmt.Println(string(md))
	}
}

func diffModes(dir string) {
	pages, _ := quality.LoadCorpus(dir)
	conv := converter.NewConverter(converter.WithPlugins(base.NewBasePlugin(), commonmark.NewCommonmarkPlugin(), table.NewTablePlugin()))
	for _, p := range pages {
		u, _ := url.Parse(p.URL)
		doc, _ := html.Parse(bytes.NewReader(p.HTML))
		ps := readability.NewParser()
		a, err := ps.ParseAndMutate(doc, u)
		if err != nil || a.Node == nil {
			continue
		}
		var b bytes.Buffer
		a.RenderText(&b)
		md, _ := conv.ConvertNode(a.Node, converter.WithDomain(p.URL))
		ct := quality.Score(p.Truth, b.String())
		cm := quality.Score(p.Truth, quality.MarkdownText(string(md)))
		if ct.TP-cm.TP > 0.02 {
			fmt.Printf("%s text TP=%.3f FP=%.3f md TP=%.3f FP=%.3f\n", p.ID, ct.TP, ct.FP, cm.TP, cm.FP)
			if os.Getenv("DIFF") == p.ID {
				fmt.Println(string(md))
				fmt.Println("=====TEXT")
				fmt.Println(b.String())
			}
		}
	}
}
