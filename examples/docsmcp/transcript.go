package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
)

// transcriptStart is the simulated time of the transcript's first call.
var transcriptStart = time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)

// transcript runs an offline session against the demo site and prints
// what an MCP client sends and gets back: a source added and refreshed,
// the site edited, three days, a second refresh, then a search and the
// changes since the second day. The clock is simulated and stands still
// within a call, and the site answers for a fixed host name, so the
// output is the same on every run (the README quotes it).
func transcript(ctx context.Context, w io.Writer) error {
	clk := clock.NewAutoFake(transcriptStart)
	site := newDemoSite(clk, demoHost)
	defer site.Close()
	dir, err := os.MkdirTemp("", "docsmcp-transcript-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	limits := recrawl.DefaultLimits()
	limits.RequestDelay = 0 // the loopback site needs no pacing; the clock stands still
	s, err := newServer(ctx, config{DB: filepath.Join(dir, "docs.sqlite"), Limits: limits, HTTPClient: site.Client(), Clock: clk, UserAgent: userAgent})
	if err != nil {
		return err
	}
	defer s.Close()
	st, ct := mcp.NewInMemoryTransports()
	if _, err := s.mcpServer().Connect(ctx, st, nil); err != nil {
		return err
	}
	// Progress notifications of a refresh arrive beside its answer, in an
	// order of their own: the transcript leaves them out.
	client, err := mcp.NewClient(&mcp.Implementation{Name: "transcript", Version: "1.0.0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		return err
	}
	defer client.Close()

	call := func(name string, args map[string]any, show bool) error {
		params := &mcp.CallToolParams{Name: name, Arguments: args}
		if name == "refresh" {
			params.SetProgressToken("refresh-" + fmt.Sprint(args["source"]))
		}
		res, err := client.CallTool(ctx, params)
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("%s: %s", name, toolText(res))
		}
		req, err := plainJSON(map[string]any{"name": name, "arguments": args}, false)
		if err != nil {
			return err
		}
		out, err := plainJSON(res.StructuredContent, show)
		if err != nil {
			return err
		}
		fmt.Fprintf(w, "→ tools/call %s\n← %s\n", req, out)
		return nil
	}
	fmt.Fprintf(w, "# %s: a new state; the demo site at http://%s\n", clk.Now().Format(time.RFC3339), demoHost)
	if err := call("add_source", map[string]any{"url": site.SitemapURL(), "name": "lantern"}, false); err != nil {
		return err
	}
	if err := call("refresh", map[string]any{"source": "lantern"}, false); err != nil {
		return err
	}
	clk.Advance(72 * time.Hour)
	editDemoSite(site)
	fmt.Fprintf(w, "# %s: the site was edited (a default changed, a section added, a page deleted)\n", clk.Now().Format(time.RFC3339))
	if err := call("refresh", map[string]any{"source": "lantern"}, false); err != nil {
		return err
	}
	if err := call("search_docs", map[string]any{"query": "how long does deploy wait for an upload", "k": 2}, true); err != nil {
		return err
	}
	return call("changes", map[string]any{"since": transcriptStart.Add(24 * time.Hour).Format(time.DateOnly), "source": "lantern"}, true)
}

// plainJSON encodes v as the transcript shows it: without escaping <, > and
// & (heading paths are joined with " > "), indented when indent is set.
func plainJSON(v any, indent bool) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent {
		enc.SetIndent("", "  ")
	}
	if err := enc.Encode(v); err != nil {
		return nil, fmt.Errorf("transcript: %w", err)
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
