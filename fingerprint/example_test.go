package fingerprint_test

import (
	"fmt"

	"github.com/recrawl/recrawl/fingerprint"
)

func ExampleRules_Of() {
	monday := "# Prices\nBread costs 2 euros.\n\nGenerated at 14:02:11\n"
	tuesday := "# Prices\nBread  costs 2 euros.\n\nGenerated at 09:40:57\n"
	raise := "# Prices\nBread costs 3 euros.\n\nGenerated at 09:40:57\n"

	fmt.Println(fingerprint.Default.Of(monday) == fingerprint.Default.Of(tuesday))
	fmt.Println(fingerprint.Default.Of(monday) == fingerprint.Default.Of(raise))
	fmt.Println(fingerprint.Default.Of(""))
	// Output:
	// true
	// false
	// e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855
}

// Strip shows the text that is hashed, to find what makes a page "change"
// on every run.
func ExampleRules_Strip() {
	page := `# Release notes

*Last updated 2026-05-01T10:00:00Z*

Version 1.2.3 fixes the installer.

[Sign out](/logout?csrf_token=8c1e55a0d2)

## Related posts

* [Version 1.2.2](/notes/1.2.2) (3 hours ago)
`
	fmt.Println(fingerprint.Default.Strip(page))
	// Output:
	// # Release notes
	// *Last updated *
	// Version 1.2.3 fixes the installer.
	// [Sign out](/logout?csrf_token=)
}

func ExampleRules_With() {
	build := fingerprint.MustRegexp("build-id", `Build [0-9a-f]{7}`, "")
	rules := fingerprint.Default.With(build)
	fmt.Println(rules.Strip("Docs\nBuild 3f9a2c1"))
	fmt.Println(fingerprint.Default.Strip("Docs\nBuild 3f9a2c1"))
	// Output:
	// Docs
	// Docs
	// Build 3f9a2c1
}

func ExampleRules_Without() {
	// A timetable site lists departure times with seconds: keep them.
	rules := fingerprint.Default.Without("clock-with-seconds")
	fmt.Println(rules.Strip("Train 12 departs 08:15:30"))
	// Output:
	// Train 12 departs 08:15:30
}

func ExampleSet_For() {
	set := fingerprint.Set{PerHost: map[string]fingerprint.Rules{
		"shop.example.com": {fingerprint.Section("shop-teasers", "Customers also bought")},
	}}
	page := "# Kettle\n1.7 litres.\n## Customers also bought\n* Mug\n"
	fmt.Printf("%q\n", set.For("https://Shop.Example.com:443/kettle").Strip(page))
	fmt.Printf("%q\n", set.For("blog.example.com").Strip(page))
	// Output:
	// "# Kettle\n1.7 litres."
	// "# Kettle\n1.7 litres.\n## Customers also bought\n* Mug"
}

func ExampleSection() {
	rules := fingerprint.Rules{fingerprint.Section("trending", "Trending now")}
	fmt.Println(rules.Strip("# News\nStory.\n## Trending now\n* Other story\n## Comments\nNone."))
	// Output:
	// # News
	// Story.
	// ## Comments
	// None.
}

func ExampleRegexp() {
	_, err := fingerprint.Regexp("footer-id", `id=(\d+`, "")
	fmt.Println(err)
	// Output:
	// fingerprint: rule "footer-id": invalid pattern: error parsing regexp: missing closing ): `id=(\d+`
}

func ExampleOf() {
	fmt.Println(fingerprint.Of("Hello") == fingerprint.Of("  Hello  \n\n"))
	// Output:
	// true
}

func ExampleStrip() {
	fmt.Println(fingerprint.Strip("Rendered in 12 ms at 2026-05-01T10:00:00Z\n\n\tHello,   world.\n"))
	// Output:
	// Rendered in 12 ms at
	// Hello, world.
}

func ExampleMustRegexp() {
	// Remove the value of a cache-buster query parameter on one site.
	rule := fingerprint.MustRegexp("cache-buster", `([?&]v=)[0-9a-f]+`, "${1}")
	fmt.Println(fingerprint.Rules{rule}.Strip("![logo](/logo.png?v=3f9a2c1)"))
	// Output:
	// ![logo](/logo.png?v=)
}

func ExampleRules_Names() {
	fmt.Println(fingerprint.Default.Names())
	// Output:
	// [related-sections tokens iso-timestamps clock-after-cue clock-with-seconds relative-times whitespace-runs]
}
