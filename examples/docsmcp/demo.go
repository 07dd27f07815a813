package main

import (
	"net/http"
	"strings"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/internal/testsite"
)

// The demo site: the documentation of a fictional command-line tool,
// "lantern", which publishes a directory of Markdown notes as a static
// site. Five pages of a few sections each, listed in a sitemap.
var demoPages = []struct{ path, title, html string }{
	{"/docs/install", "Installing lantern", `<p>lantern turns a directory of Markdown notes into a static website. This page covers installing it.</p>
<h2>Requirements</h2>
<p>lantern runs on Linux, macOS and Windows. It needs no runtime: the release archive holds a single binary.</p>
<h2>Linux and macOS</h2>
<p>Download the archive for your platform, unpack it and move the binary onto your PATH:</p>
<pre><code>tar xzf lantern-linux-amd64.tar.gz
sudo mv lantern /usr/local/bin/
</code></pre>
<h2>Windows</h2>
<p>Unzip the archive and add the folder that holds <code>lantern.exe</code> to the PATH environment variable.</p>
`},
	{"/docs/build", "Building a site", `<p>Run <code>lantern build</code> in the directory of your notes. It writes the site to <code>public/</code>.</p>
<h2>Templates</h2>
<p>Pages are rendered with the templates in <code>theme/</code>. A note can pick a template with the <code>layout</code> key of its front matter.</p>
<h2>Drafts</h2>
<p>A note whose front matter sets <code>draft: true</code> is left out of the build unless you pass <code>--drafts</code>.</p>
<h2>Incremental builds</h2>
<p>lantern keeps a cache in <code>.lantern/</code> and rebuilds only the notes that changed since the last build. Delete the cache to force a full build.</p>
`},
	{"/docs/configuration", "Configuration", `<p>lantern reads <code>lantern.toml</code> at the root of the notes directory.</p>
<h2>Base URL</h2>
<p>Set <code>base_url</code> to the address the site is published at; links and the sitemap are made absolute with it.</p>
<h2>Upload timeout</h2>
<p>The <code>deploy</code> command gives up on an upload after 60 seconds. Set <code>upload_timeout</code> (in seconds) to wait longer on a slow connection.</p>
<h2>Search index</h2>
<p>With <code>search = true</code> the build writes a JSON search index that the default theme queries in the browser.</p>
`},
	{"/docs/deploy", "Deploying", `<p><code>lantern deploy</code> uploads <code>public/</code> to the target named in <code>lantern.toml</code>: an S3 bucket, an SFTP server or a Git branch.</p>
<h2>Credentials</h2>
<p>lantern reads credentials from the environment: <code>LANTERN_S3_KEY</code> and <code>LANTERN_S3_SECRET</code> for a bucket, an SSH agent for SFTP.</p>
<h2>Dry runs</h2>
<p>Pass <code>--dry-run</code> to list the files that would be uploaded or deleted without touching the target.</p>
`},
	{"/docs/faq", "FAQ", `<h2>Can lantern render math?</h2>
<p>Not yet. Math blocks are passed through as code.</p>
<h2>Does lantern watch for changes?</h2>
<p>Run <code>lantern serve</code>: it rebuilds on every save and reloads the browser.</p>
`},
}

// demoHost is the name the transcript's site answers for, so that its
// URLs do not depend on a loopback port.
const demoHost = "docs.lantern.test"

// newDemoSite serves the demo pages on a loopback port, under host when
// not empty (reachable through the site's Client only).
func newDemoSite(clk clock.Clock, host string) *testsite.Site {
	site := testsite.New(testsite.Options{Pages: 1, Clock: clk, Host: host})
	fillDemoSite(site)
	return site
}

// listenDemoSite serves the demo pages at addr, for -demo.
func listenDemoSite(addr string) (*testsite.Site, error) {
	site, err := testsite.Listen(addr, testsite.Options{Pages: 1})
	if err != nil {
		return nil, err
	}
	fillDemoSite(site)
	return site, nil
}

func fillDemoSite(site *testsite.Site) {
	site.RemoveFromSitemap(site.Paths()[0]) // the generated page: not part of the docs
	for _, p := range demoPages {
		site.Add(p.path, p.title, p.html)
	}
}

// editDemoSite makes the transcript's changes between two refreshes:
// the upload timeout's default moves, a section is added to the deploy
// page, and the FAQ is taken down.
func editDemoSite(site *testsite.Site) {
	cfg, _ := site.Page("/docs/configuration")
	site.SetContent("/docs/configuration", strings.Replace(cfg.Content,
		"gives up on an upload after 60 seconds. Set <code>upload_timeout</code> (in seconds) to wait longer on a slow connection.",
		"gives up on an upload after 120 seconds, and retries it twice first. Set <code>upload_timeout</code> (in seconds) to change how long it waits.", 1))
	dep, _ := site.Page("/docs/deploy")
	site.SetContent("/docs/deploy", dep.Content+`<h2>Rollback</h2>
<p><code>lantern deploy --rollback</code> puts back the previous upload; lantern keeps the last three.</p>
`)
	site.Delete("/docs/faq", http.StatusNotFound)
}
