package recrawl_test

import (
	"errors"
	"fmt"

	"github.com/recrawl/recrawl"
)

// New reports every invalid field of a Config at once.
func ExampleNew() {
	_, err := recrawl.New(recrawl.Config{Workers: -2})
	var ce *recrawl.ConfigError
	if errors.As(err, &ce) {
		for _, p := range ce.Problems {
			fmt.Println(p.Field+":", p.Reason)
		}
	}
	// Output:
	// State: required: open one with crawlstate/sqlite.Open
	// Workers: must be >= 0 (0 means 4), got -2
}

// LimitsFromLookup reads the WEB_* caps from any source of variables;
// LimitsFromEnv reads them from the environment.
func ExampleLimitsFromLookup() {
	env := map[string]string{"WEB_MAX_PAGES": "200", "WEB_REQUEST_DELAY_MS": "1000"}
	l, err := recrawl.LimitsFromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	fmt.Println(l.MaxPages, l.RequestDelay, l.RespectRobots, err)

	env["WEB_MAX_DEPTH"] = "-1"
	_, err = recrawl.LimitsFromLookup(func(k string) (string, bool) { v, ok := env[k]; return v, ok })
	fmt.Println(err)
	// Output:
	// 200 1s true <nil>
	// recrawl: limits from environment: WEB_MAX_DEPTH="-1": must not be negative
}
