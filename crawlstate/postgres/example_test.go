package postgres_test

import (
	"context"
	"fmt"
	"os"

	"github.com/recrawl/recrawl/crawlstate/postgres"
)

// Open a State in a schema of its own; it prints nothing without a server.
func ExampleOpen() {
	dsn := os.Getenv("RECRAWL_TEST_POSTGRES_DSN")
	if dsn == "" {
		return
	}
	s, err := postgres.Open(context.Background(), dsn, postgres.WithSchema("recrawl_example"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
}
