package fingerprint

import (
	"net"
	"net/url"
	"sort"
	"strings"

	"golang.org/x/net/idna"
)

// Set holds the rules of many sites: Base for every host, plus extra rules
// per host. The zero Set uses Default for every host.
type Set struct {
	// Base applies to every host. Nil means Default; an empty non-nil
	// Rules{} means no rules.
	Base Rules
	// PerHost maps a host to rules that run after Base for that host only.
	// Keys are compared in normalized form (see For), so "Docs.Example.com:443"
	// and "docs.example.com" name the same host. Subdomains do not inherit
	// a parent's rules.
	PerHost map[string]Rules
}

// For returns the rules for host: Base followed by the PerHost rules of that
// host. host may be a bare host, host:port, or an absolute URL; hosts are
// compared lower-cased, without port, userinfo or trailing dot, with
// internationalized names in their ASCII (punycode) form. The result is a
// new slice; neither Base nor Default is modified.
func (s Set) For(host string) Rules {
	base := s.Base
	if base == nil {
		base = Default
	}
	h := hostKey(host)
	if h == "" || len(s.PerHost) == 0 {
		return base.With()
	}
	keys := make([]string, 0, len(s.PerHost))
	for k := range s.PerHost {
		if hostKey(k) == h {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys) // keys that normalize alike apply in a fixed order
	var extra Rules
	for _, k := range keys {
		extra = append(extra, s.PerHost[k]...)
	}
	return base.With(extra...)
}

// hostKey normalizes a host, host:port or URL to the form Set compares.
func hostKey(s string) string {
	s = strings.TrimSpace(s)
	if strings.Contains(s, "://") {
		if u, err := url.Parse(s); err == nil {
			s = u.Host
		}
	}
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:]
	}
	if h, _, err := net.SplitHostPort(s); err == nil {
		s = h
	}
	s = strings.TrimSuffix(strings.Trim(s, "[]"), ".")
	s = strings.ToLower(s)
	if a, err := idna.Lookup.ToASCII(s); err == nil {
		s = a
	}
	return s
}
