package normalize

import (
	"net/url"
	"strings"
)

// SameSite reports whether two absolute URLs are on one site: the same
// host, ignoring case and a leading "www." (a host and its www twin are
// one site), on the same port, where a scheme's default port (80 for
// http, 443 for https) equals no port, so an http to https upgrade stays
// on the site. Other subdomains are other sites. A URL that does not
// parse, or has no host, is on no site.
func SameSite(a, b string) bool {
	ua, err := url.Parse(a)
	if err != nil || ua.Host == "" {
		return false
	}
	ub, err := url.Parse(b)
	if err != nil || ub.Host == "" {
		return false
	}
	return sameSiteURL(ua, ub)
}

// sameSiteURL is SameSite for parsed URLs.
func sameSiteURL(a, b *url.URL) bool {
	ha := strings.TrimPrefix(strings.TrimSuffix(strings.ToLower(a.Hostname()), "."), "www.")
	hb := strings.TrimPrefix(strings.TrimSuffix(strings.ToLower(b.Hostname()), "."), "www.")
	return ha != "" && ha == hb && sitePort(a) == sitePort(b)
}

// sitePort is a URL's explicit port, or "" for none or the scheme's
// default.
func sitePort(u *url.URL) string {
	p := u.Port()
	switch {
	case p == "80" && strings.EqualFold(u.Scheme, "http"), p == "443" && strings.EqualFold(u.Scheme, "https"):
		return ""
	}
	return p
}
