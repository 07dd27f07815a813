package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/internal/testsite"
)

// docsindex refuses private destinations unless -allow-private: the
// entry URL may come from anyone.
func TestPrivateEntryIsRefusedWithoutAllowPrivate(t *testing.T) {
	h := newHarness(t, testsite.Options{Pages: 3})
	var stdout, stderr bytes.Buffer
	err := run(context.Background(), env{
		args:   []string{"-entry", h.site.SitemapURL(), "-db", h.db, "-out", h.out},
		stdout: &stdout, stderr: &stderr, clock: h.clk,
	})
	require.ErrorIs(t, err, fetch.ErrPrivateAddress)
	require.Contains(t, err.Error(), "127.0.0.1")
	require.Empty(t, h.site.Requests(), "nothing reached the site")

	_, _, err = h.run("-entry", h.site.SitemapURL()) // with -allow-private
	require.NoError(t, err)
	require.NotEmpty(t, h.site.PageRequests())
}
