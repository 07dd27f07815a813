package geonode_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"sort"
	"strings"
	"time"

	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/fetch/geonode"
	"github.com/recrawl/recrawl/internal/fakegeonode"
	"github.com/recrawl/recrawl/internal/testsite"
)

func ExampleNew() {
	key, err := geonode.APIKeyFromEnv()
	if err != nil {
		key = "example-key" // in a real program: report err and stop
	}
	c, err := geonode.New(key,
		geonode.WithRenderJS(true),
		geonode.WithProxy(geonode.Proxy{Country: "US", Type: "residential"}),
		geonode.WithBatchDeadline(10*time.Minute),
	)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(c) // the key is never printed
	// Output: geonode.Client{base: https://scraper.geonode.io, key: [REDACTED]}
}

func ExampleAPIKeyFromEnv() {
	key, err := geonode.APIKeyFromEnv()
	if errors.Is(err, geonode.ErrNoAPIKey) {
		fmt.Println("set", geonode.EnvAPIKey)
		return
	}
	_, _ = geonode.New(key)
}

func ExampleClient_Fetch() {
	site := testsite.New(testsite.Options{Pages: 3})
	defer site.Close()
	api := fakegeonode.New(fakegeonode.Options{})
	defer api.Close()

	c, err := geonode.New(api.APIKey(), geonode.WithBaseURL(api.URL()))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	page := site.PageURL("/docs/page-0002")
	resp, err := c.Fetch(ctx, fetch.Request{URL: page})
	if err != nil {
		log.Fatal(err)
	}
	title, rest, _ := strings.Cut(string(resp.Body), "\n\n")
	fmt.Println(resp.Status, resp.ContentType, "billed:", resp.Billed)
	firstSentence, _, _ := strings.Cut(rest, ". ")
	fmt.Println(title)
	fmt.Println(firstSentence + ".")

	site.Delete("/docs/page-0003", 410)
	resp, err = c.Fetch(ctx, fetch.Request{URL: site.PageURL("/docs/page-0003")})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Status, "gone:", resp.Gone())
	// Output:
	// 200 text/markdown; charset=utf-8 billed: 1
	// # Page 2
	// This is page 2, revision 1.
	// 410 gone: true
}

func ExampleClient_FetchBatch() {
	site := testsite.New(testsite.Options{Pages: 4})
	defer site.Close()
	api := fakegeonode.New(fakegeonode.Options{ItemsPerPoll: 2})
	defer api.Close()
	c, err := geonode.New(api.APIKey(), geonode.WithBaseURL(api.URL()), geonode.WithPolling(10*time.Millisecond, 50*time.Millisecond))
	if err != nil {
		log.Fatal(err)
	}
	var reqs []fetch.Request
	for _, u := range site.PageURLs() {
		reqs = append(reqs, fetch.Request{URL: u})
	}
	reqs = append(reqs, fetch.Request{URL: "not-a-url"})
	var lines []string
	err = c.FetchBatch(context.Background(), reqs, func(i int, resp *fetch.Response, err error) {
		if err != nil {
			lines = append(lines, fmt.Sprintf("%d: %v", i, errors.Is(err, geonode.ErrInvalidURL)))
			return
		}
		lines = append(lines, fmt.Sprintf("%d: %d billed %d", i, resp.Status, resp.Billed))
	})
	if err != nil {
		log.Fatal(err)
	}
	sort.Strings(lines)
	fmt.Println(strings.Join(lines, "\n"))
	// Output:
	// 0: 200 billed 1
	// 1: 200 billed 1
	// 2: 200 billed 1
	// 3: 200 billed 1
	// 4: true
}

func ExampleClient_MapURLs() {
	site := testsite.New(testsite.Options{Pages: 3})
	defer site.Close()
	api := fakegeonode.New(fakegeonode.Options{})
	defer api.Close()
	c, err := geonode.New(api.APIKey(), geonode.WithBaseURL(api.URL()))
	if err != nil {
		log.Fatal(err)
	}
	urls, err := c.MapURLs(context.Background(), site.PageURL("/docs/page-0001"))
	if err != nil {
		log.Fatal(err)
	}
	for _, u := range urls {
		fmt.Println(strings.TrimPrefix(u, site.URL()))
	}
	// Output:
	// /docs/page-0001
	// /docs/page-0002
	// /docs/page-0003
	// /
	// /docs/
}

func ExampleIsFatal() {
	site := testsite.New(testsite.Options{Pages: 1})
	defer site.Close()
	api := fakegeonode.New(fakegeonode.Options{})
	defer api.Close()
	api.SetBalance(0)
	c, err := geonode.New(api.APIKey(), geonode.WithBaseURL(api.URL()))
	if err != nil {
		log.Fatal(err)
	}
	_, err = c.Fetch(context.Background(), fetch.Request{URL: site.PageURL("/docs/page-0001")})
	fmt.Println(errors.Is(err, geonode.ErrPaymentRequired), geonode.IsFatal(err))
	// Output: true true
}
