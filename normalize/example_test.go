package normalize_test

import (
	"errors"
	"fmt"

	"github.com/recrawl/recrawl/normalize"
)

func ExampleURL() {
	for _, raw := range []string{
		"https://Example.com/docs/?utm_source=x#top",
		"HTTP://Bücher.example:80/a/./b/../%7Euser?b=2&a=1",
	} {
		u, err := normalize.URL(raw)
		fmt.Println(u, err)
	}
	// Output:
	// https://example.com/docs <nil>
	// http://xn--bcher-kva.example/a/~user?a=1&b=2 <nil>
}

func ExampleURL_error() {
	_, err := normalize.URL("ftp://example.com/file.txt")
	fmt.Println(errors.Is(err, normalize.ErrScheme))
	fmt.Println(err)
	// Output:
	// true
	// normalize "ftp://example.com/file.txt": unsupported scheme: scheme "ftp" is not http or https
}

func ExamplePolicy_URL() {
	// A site that serves different pages at /docs and /docs/, routes its
	// application after "#", and adds a session key to links.
	p := normalize.Policy{
		KeepTrailingSlash: true,
		KeepFragment:      true,
		Tracking:          append(normalize.DefaultTracking(), "sessionid"),
	}
	u, err := p.URL("https://example.com/docs/?sessionid=42&utm_medium=mail#/intro")
	fmt.Println(u, err)
	// Output: https://example.com/docs/#/intro <nil>
}

func ExampleResolve() {
	base := "https://example.com/docs/guide/" // the URL the page was fetched from
	for _, ref := range []string{"../api?ref=nav", "?page=2", "#install", "//cdn.example.com/x", "mailto:a@example.com"} {
		u, err := normalize.Resolve(base, ref)
		fmt.Println(u, err)
	}
	// Output:
	// https://example.com/docs/api <nil>
	// https://example.com/docs/guide?page=2 <nil>
	// https://example.com/docs/guide <nil>
	// https://cdn.example.com/x <nil>
	//  normalize "mailto:a@example.com" (base "https://example.com/docs/guide/"): unsupported scheme: scheme "mailto" is not http or https
}

func ExamplePolicy_Resolve() {
	p := normalize.Policy{KeepTrailingSlash: true}
	u, err := p.Resolve("https://example.com/docs/a/", "../b/")
	fmt.Println(u, err)
	// Output: https://example.com/docs/b/ <nil>
}

func ExampleDefaultTracking() {
	fmt.Println(normalize.DefaultTracking())
	// Output: [utm_* gclid fbclid mc_cid mc_eid ref]
}

func ExampleSameSite() {
	fmt.Println(normalize.SameSite("https://example.com/docs/", "https://www.example.com/docs/intro"))
	fmt.Println(normalize.SameSite("http://example.com/docs/", "https://example.com/docs/"))
	fmt.Println(normalize.SameSite("https://example.com/docs/", "https://cdn.example.net/docs/"))
	// Output:
	// true
	// true
	// false
}
