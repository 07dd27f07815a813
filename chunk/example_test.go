package chunk_test

import (
	"fmt"

	"github.com/recrawl/recrawl/chunk"
)

func ExampleSplit() {
	page := `# Install

Download the archive for your platform.

## Linux

` + "```sh\ntar xzf recrawl.tgz\n```" + `

## Windows

Run the installer.
`
	opts := chunk.Options{SplitLevel: 2, MaxBytes: 800}
	fmt.Println(chunk.Version(opts))
	for _, c := range chunk.Split(page, opts) {
		fmt.Printf("%d %q [%d:%d] %s…\n", c.Ordinal, c.HeadingPath(), c.Start, c.End, c.TextHash[:12])
	}
	// Output:
	// md-heading-v1/L2/800
	// 0 "Install" [0:50] c9cbeec8750e…
	// 1 "Install > Linux" [52:91] 6cb1966e67b3…
	// 2 "Install > Windows" [93:123] 2eb8a70cadf8…
}

// Version changes when the algorithm or the options change, so stored chunk
// IDs made under another version are known to differ for that reason alone.
func ExampleVersion() {
	fmt.Println(chunk.Version(chunk.Options{}))
	fmt.Println(chunk.Version(chunk.Options{SplitLevel: 2, MaxBytes: 1000}))
	// Output:
	// md-heading-v1/L3/1500
	// md-heading-v1/L2/1000
}
