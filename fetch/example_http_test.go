package fetch_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/internal/testsite"
)

// A second fetch with the stored validators is answered 304: no body.
func ExampleHTTP() {
	site := testsite.New(testsite.Options{Pages: 1})
	defer site.Close()
	f := &fetch.HTTP{UserAgent: "mybot/1.0", Timeout: 10 * time.Second, MaxBytes: 1 << 20}
	u := site.PageURL(site.Paths()[0])

	first, err := f.Fetch(context.Background(), fetch.Request{URL: u})
	if err != nil {
		fmt.Println(err)
		return
	}
	again, err := f.Fetch(context.Background(), fetch.Request{URL: u, ETag: first.ETag, LastModified: first.LastModified})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(first.Status, len(first.Body) > 0)
	fmt.Println(again.Status, again.NotModified(), len(again.Body))
	// Output:
	// 200 true
	// 304 true 0
}

// Polite makes any http.Client obey robots.txt and space its requests to
// one host.
func ExamplePolite() {
	site := testsite.New(testsite.Options{Pages: 2})
	defer site.Close()
	site.SetRobots("User-agent: *\nDisallow: /docs/page-0002\nCrawl-delay: 5\n", http.StatusOK)
	p := &fetch.Polite{UserAgent: "mybot/1.0", Delay: time.Second, Clock: clock.NewAutoFake(time.Now())}
	client := &http.Client{Transport: p}

	allowed, _ := p.Allowed(context.Background(), site.PageURL("/docs/page-0002"))
	fmt.Println("page 2 allowed:", allowed)
	_, err := client.Get(site.PageURL("/docs/page-0002"))
	fmt.Println(err != nil)
	rules, _ := p.Rules(context.Background(), site.URL())
	fmt.Println("delay between requests:", max(p.Delay, rules.CrawlDelay(p.UserAgent)))
	// Output:
	// page 2 allowed: false
	// true
	// delay between requests: 5s
}

// StayOnSite keeps a client's redirects on the site it was asked for.
func ExampleStayOnSite() {
	docs := testsite.New(testsite.Options{Pages: 1})
	defer docs.Close()
	other := testsite.New(testsite.Options{Pages: 1})
	defer other.Close()
	docs.Redirect(docs.Paths()[0], other.PageURL(other.Paths()[0]))

	client := &http.Client{CheckRedirect: fetch.StayOnSite(nil)}
	resp, err := client.Get(docs.PageURL(docs.Paths()[0]))
	if err == nil {
		resp.Body.Close()
	}
	fmt.Println(errors.Is(err, fetch.ErrOffHostRedirect), other.Count(nil))
	// Output:
	// true 0
}
