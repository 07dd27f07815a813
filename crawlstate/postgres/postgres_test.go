package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/postgres"
	"github.com/recrawl/recrawl/crawlstate/statetest"
)

// testPool connects to RECRAWL_TEST_POSTGRES_DSN, or skips the test.
func testPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	dsn := os.Getenv("RECRAWL_TEST_POSTGRES_DSN")
	if dsn == "" {
		t.Skip("RECRAWL_TEST_POSTGRES_DSN is not set: no PostgreSQL server to test against")
	}
	p, err := pgxpool.New(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(p.Close)
	return p
}

// testSchema returns a schema of the test's own, dropped after it.
func testSchema(t testing.TB, p *pgxpool.Pool) string {
	t.Helper()
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	schema := "recrawl_state_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		_, err := p.Exec(context.Background(), `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`)
		require.NoError(t, err)
	})
	return schema
}

// openFresh is a statetest.Opener: a State in a schema of the subtest's
// own.
func openFresh(p *pgxpool.Pool) statetest.Opener {
	return func(t *testing.T, opts crawlstate.Options) crawlstate.State {
		s, err := postgres.OpenPool(context.Background(), p, postgres.WithOptions(opts), postgres.WithSchema(testSchema(t, p)))
		require.NoError(t, err)
		return s
	}
}

func TestConformance(t *testing.T) {
	statetest.Run(t, openFresh(testPool(t)))
}

func TestSharerConformance(t *testing.T) {
	statetest.RunSharer(t, openFresh(testPool(t)))
}

func TestNewerSchemaRefused(t *testing.T) {
	p := testPool(t)
	schema := testSchema(t, p)
	s, err := postgres.OpenPool(context.Background(), p, postgres.WithSchema(schema))
	require.NoError(t, err)
	require.NoError(t, s.Close())
	_, err = p.Exec(context.Background(), `INSERT INTO `+pgx.Identifier{schema, "recrawl_state_migrations"}.Sanitize()+` (version) VALUES (999)`)
	require.NoError(t, err)
	_, err = postgres.OpenPool(context.Background(), p, postgres.WithSchema(schema))
	var ve *postgres.SchemaVersionError
	require.ErrorAs(t, err, &ve)
	require.Equal(t, 999, ve.Have)
}

// A schema at migration 1 (documents without seen_at) upgrades: its
// documents keep their fields and vouch for no row until a TouchListed,
// which then stamps them instead of writing the rows.
func TestMigrateDocumentsSeenAt(t *testing.T) {
	p := testPool(t)
	schema := testSchema(t, p)
	ctx := context.Background()
	s, err := postgres.OpenPool(ctx, p, postgres.WithSchema(schema))
	require.NoError(t, err)
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	const sm = "https://ex.com/sitemap.xml"
	_, err = s.UpsertDiscovered(ctx, "docs", t0, []crawlstate.Discovered{{URL: "https://ex.com/a", Via: sm}})
	require.NoError(t, err)
	require.NoError(t, s.Close())
	id := func(name string) string { return pgx.Identifier{schema, name}.Sanitize() }
	for _, q := range []string{
		`ALTER TABLE ` + id("documents") + ` DROP COLUMN seen_at`,
		`DELETE FROM ` + id("recrawl_state_migrations") + ` WHERE version = 2`,
		`INSERT INTO ` + id("documents") + ` (source, url, etag, last_modified, entries, newest_lastmod, listed_lastmod, fetched_at)
VALUES ('docs', '` + sm + `', '"e"', '', 1, 0, 0, ` + fmt.Sprint(t0.UnixNano()) + `)`,
	} {
		_, err := p.Exec(ctx, q)
		require.NoError(t, err, q)
	}

	s, err = postgres.OpenPool(ctx, p, postgres.WithSchema(schema))
	require.NoError(t, err)
	defer s.Close()
	doc, err := s.Document(ctx, "docs", sm)
	require.NoError(t, err)
	require.Equal(t, `"e"`, doc.ETag)
	require.True(t, doc.FetchedAt.Equal(t0))
	t1 := t0.Add(24 * time.Hour)
	n, err := s.TouchListed(ctx, "docs", sm, t1)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	r, err := s.Get(ctx, "docs", "https://ex.com/a")
	require.NoError(t, err)
	require.True(t, r.LastSeen.Equal(t1), "LastSeen %v", r.LastSeen)
	var stored int64
	require.NoError(t, p.QueryRow(ctx, `SELECT last_seen FROM `+id("pages")+` WHERE url = 'https://ex.com/a'`).Scan(&stored))
	require.Equal(t, t0.UnixNano(), stored, "the row itself was not written")
}

func TestClaimRace(t *testing.T) {
	p := testPool(t)
	s, err := postgres.OpenPool(context.Background(), p, postgres.WithSchema(testSchema(t, p)))
	require.NoError(t, err)
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 123456789, time.UTC)
	const n = 5000
	ds := make([]crawlstate.Discovered, n)
	urls := make([]string, n)
	for i := range ds {
		urls[i] = fmt.Sprintf("https://ex.com/%05d", i)
		ds[i] = crawlstate.Discovered{URL: urls[i]}
	}
	_, err = s.UpsertDiscovered(ctx, "docs", t0, ds)
	require.NoError(t, err)
	require.NoError(t, s.Lock(ctx, "docs", "L", t0, time.Hour))
	offered, err := s.Offer(ctx, "docs", t0, "L", urls)
	require.NoError(t, err)
	require.Equal(t, n, offered)
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for {
				rows, _, _, err := s.Claim(ctx, "docs", t0, fmt.Sprint("w", w), t0, time.Hour, 50)
				if !assert.NoError(t, err) || len(rows) == 0 {
					return
				}
				mu.Lock()
				for _, r := range rows {
					seen[r.URL]++
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.Len(t, seen, n)
	for u, c := range seen {
		require.Equal(t, 1, c, "%s claimed %d times", u, c)
	}
}

// Extend does not wait for a row another transaction holds locked (a
// Record of the owner's committer): waiting could deadlock against it.
// The locked row is skipped; the others are extended.
func TestExtendSkipsLockedRows(t *testing.T) {
	p := testPool(t)
	schema := testSchema(t, p)
	s, err := postgres.OpenPool(context.Background(), p, postgres.WithSchema(schema))
	require.NoError(t, err)
	ctx := context.Background()
	t0 := time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)
	urls := []string{"https://ex.com/a", "https://ex.com/b"}
	_, err = s.UpsertDiscovered(ctx, "docs", t0, []crawlstate.Discovered{{URL: urls[0]}, {URL: urls[1]}})
	require.NoError(t, err)
	require.NoError(t, s.Lock(ctx, "docs", "L", t0, time.Hour))
	_, err = s.Offer(ctx, "docs", t0, "L", urls)
	require.NoError(t, err)
	rows, _, _, err := s.Claim(ctx, "docs", t0, "w", t0, time.Minute, 10)
	require.NoError(t, err)
	require.Len(t, rows, 2)

	tx, err := p.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(ctx)
	_, err = tx.Exec(ctx, `UPDATE `+pgx.Identifier{schema, "pages"}.Sanitize()+` SET title = 'x' WHERE source = 'docs' AND url = $1`, urls[0])
	require.NoError(t, err)

	short, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	n, err := s.Extend(short, "docs", "w", t0.Add(30*time.Second), time.Minute)
	require.NoError(t, err, "Extend waited for the locked row")
	require.Equal(t, 1, n, "the locked row is skipped, the other extended")
}
