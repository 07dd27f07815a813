package discover

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Mapper lists the URLs of a site through a mapping service. The Geonode
// client (*geonode.Client in fetch/geonode) implements it with POST
// /v1/map; discover does not import it. Implementations are safe for
// concurrent use; an error means the listing is unknown.
type Mapper interface {
	MapURLs(ctx context.Context, siteURL string) ([]string, error)
}

// ErrNoMapper is returned by GeonodeMap.Discover when Mapper is nil.
var ErrNoMapper = errors.New("discover: GeonodeMap.Mapper is required")

// GeonodeMap discovers the pages of a site without a usable sitemap by
// asking a Mapper (Geonode's map endpoint: the site's sitemaps plus the
// links of the page at URL). Links are yielded in the Mapper's order with
// depth 0 and no lastmod; relative links are resolved against URL, and links
// on another host than URL's are yielded with Skip set to SkipOffHost (with
// Subdomains, subdomains of URL's host are accepted). It does not use
// Env.Client: the Mapper has its own.
type GeonodeMap struct {
	// Mapper lists the URLs. Required.
	Mapper Mapper
	// URL is the site's entry page, such as "https://docs.example.com/".
	URL string
	// SourceName names the source in state; empty means "geonode-map:"+URL.
	SourceName string
	// Subdomains accepts links on subdomains of URL's host (for a Mapper
	// that probes them, such as a geonode.Client WithIncludeSubdomains).
	Subdomains bool
}

// Name implements Source.
func (g GeonodeMap) Name() string {
	if g.SourceName != "" {
		return g.SourceName
	}
	return "geonode-map:" + g.URL
}

// Discover implements Source. A Mapper error is returned wrapped (the
// listing is incomplete); errors.Is and errors.As see the Mapper's error,
// so a caller can tell a fatal back-end error from a transient one.
func (g GeonodeMap) Discover(ctx context.Context, env Env, yield func(Link) error) error {
	if g.Mapper == nil {
		return ErrNoMapper
	}
	base, err := url.Parse(g.URL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return &FetchError{URL: g.URL, Err: fmt.Errorf("the site URL must be an absolute http(s) URL: %q", g.URL)}
	}
	urls, err := g.Mapper.MapURLs(ctx, g.URL)
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return fmt.Errorf("discover: mapping %s: %w", g.URL, err)
	}
	env.logger().DebugContext(ctx, "site mapped", "site", g.URL, "links", len(urls))
	for _, raw := range urls {
		if err := ctx.Err(); err != nil {
			return err
		}
		l := Link{URL: raw}
		u, err := base.Parse(strings.TrimSpace(raw))
		switch {
		case err != nil:
			// Left as listed: the engine's normalization rejects it and
			// counts it as invalid.
		case !g.onSite(base, u):
			l.URL, l.Skip = u.String(), SkipOffHost
		default:
			l.URL = u.String()
		}
		if err := yield(l); err != nil {
			return err
		}
	}
	return nil
}

func (g GeonodeMap) onSite(base, u *url.URL) bool {
	if sameHost(base, u) {
		return true
	}
	if !g.Subdomains || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	h, bh := strings.ToLower(u.Hostname()), strings.ToLower(base.Hostname())
	return strings.HasSuffix(h, "."+bh) && u.Port() == base.Port()
}
