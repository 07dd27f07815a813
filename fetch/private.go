package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// ErrPrivateAddress is matched by errors.Is for a *PrivateAddressError.
var ErrPrivateAddress = errors.New("private address refused")

// PrivateAddressError is a connection a Guard refused: after DNS
// resolution its destination was a loopback, private, link-local,
// unique-local, CGNAT, cloud-metadata or otherwise non-public address.
// Nothing was sent to it.
type PrivateAddressError struct {
	Host  string     // the name dialed, as in the URL ("" when unknown)
	Addr  netip.Addr // the resolved address refused
	Class string     // what the address is, as PrivateClass names it
}

// Error describes the failure.
func (e *PrivateAddressError) Error() string {
	host := ""
	if e.Host != "" && e.Host != e.Addr.String() {
		host = " for " + e.Host
	}
	return fmt.Sprintf("fetch: refused to connect to %s%s: a %s address (private addresses are blocked: WEB_BLOCK_PRIVATE, Limits.BlockPrivate)", e.Addr, host, e.Class)
}

// Is makes errors.Is(err, ErrPrivateAddress) true.
func (e *PrivateAddressError) Is(target error) bool { return target == ErrPrivateAddress }

var (
	cgnat       = netip.MustParsePrefix("100.64.0.0/10")
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")
	reserved4   = []netip.Prefix{
		netip.MustParsePrefix("192.0.0.0/24"),    // IETF protocol assignments
		netip.MustParsePrefix("192.0.2.0/24"),    // TEST-NET-1
		netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
		netip.MustParsePrefix("198.51.100.0/24"), // TEST-NET-2
		netip.MustParsePrefix("203.0.113.0/24"),  // TEST-NET-3
		netip.MustParsePrefix("240.0.0.0/4"),     // reserved, broadcast
	}
	metadata = []netip.Addr{
		netip.MustParseAddr("169.254.169.254"), // AWS, GCP, Azure, OpenStack
		netip.MustParseAddr("fd00:ec2::254"),   // AWS over IPv6
		netip.MustParseAddr("100.100.100.200"), // Alibaba Cloud
	}
	nat64   = netip.MustParsePrefix("64:ff9b::/96")
	sixTo4  = netip.MustParsePrefix("2002::/16")
	teredo  = netip.MustParsePrefix("2001::/32")
	docs6   = netip.MustParsePrefix("2001:db8::/32")
	siteLoc = netip.MustParsePrefix("fec0::/10")
)

// PrivateClass names what a non-public address is: "metadata",
// "loopback", "private" (RFC 1918), "unique-local" (fc00::/7),
// "link-local", "cgnat" (100.64.0.0/10), "unspecified", "multicast" or
// "reserved"; "" for a public address. IPv4-mapped IPv6 addresses, and
// IPv4 addresses embedded by NAT64 (64:ff9b::/96) and 6to4 (2002::/16),
// are classified by their IPv4 address.
func PrivateClass(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	for _, m := range metadata {
		if a == m {
			return "metadata"
		}
	}
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			if c := PrivateClass(netip.AddrFrom4([4]byte(b[12:16]))); c != "" {
				return c
			}
		case sixTo4.Contains(a):
			if c := PrivateClass(netip.AddrFrom4([4]byte(b[2:6]))); c != "" {
				return c
			}
		}
	}
	switch {
	case !a.IsValid():
		return "reserved"
	case a.IsLoopback():
		return "loopback"
	case a.Is4() && a.IsPrivate():
		return "private"
	case a.IsPrivate():
		return "unique-local"
	case a.IsLinkLocalUnicast(), siteLoc.Contains(a):
		return "link-local"
	case cgnat.Contains(a):
		return "cgnat"
	case a.IsUnspecified(), thisNetwork.Contains(a):
		return "unspecified"
	case a.IsMulticast(), a.IsInterfaceLocalMulticast(), a.IsLinkLocalMulticast():
		return "multicast"
	case teredo.Contains(a), docs6.Contains(a):
		return "reserved"
	}
	if a.Is4() {
		for _, p := range reserved4 {
			if p.Contains(a) {
				return "reserved"
			}
		}
	}
	return ""
}

// Guard refuses connections to non-public addresses at dial time, after
// DNS resolution, so a name that resolves to a private address is refused
// as surely as the address itself, and no request (the first one or a
// redirect) reaches it. Use it for a service that fetches URLs given by
// untrusted users. The zero value is ready to use.
type Guard struct {
	// Dialer makes the connections (default: a net.Dialer with the
	// timeouts of http.DefaultTransport). Its Control, if any, runs after
	// the guard's check.
	Dialer *net.Dialer
	// Allow lists addresses let through whatever their class (such as a
	// known internal mirror).
	Allow []netip.Prefix
}

// Check returns a *PrivateAddressError when a connection to address (an
// "ip:port" or "ip") must be refused.
func (g *Guard) Check(address string) error {
	host := address
	if h, _, err := net.SplitHostPort(address); err == nil {
		host = h
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		// Control always gets a resolved IP; anything else is refused.
		return &PrivateAddressError{Host: host, Class: "unresolved"}
	}
	for _, p := range g.Allow {
		if p.Contains(a.Unmap()) {
			return nil
		}
	}
	if c := PrivateClass(a); c != "" {
		return &PrivateAddressError{Addr: a, Class: c}
	}
	return nil
}

// Control is a net.Dialer Control function: it runs after the address
// was resolved and the socket created, before the connection is made.
func (g *Guard) Control(network, address string, c syscall.RawConn) error {
	if err := g.Check(address); err != nil {
		return err
	}
	if g.Dialer != nil && g.Dialer.Control != nil {
		return g.Dialer.Control(network, address, c)
	}
	return nil
}

// DialContext dials like net.Dialer.DialContext with the guard's Control.
// A refusal is a *PrivateAddressError naming the host dialed.
func (g *Guard) DialContext(ctx context.Context, network, address string) (net.Conn, error) {
	d := net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
	if g.Dialer != nil {
		d = *g.Dialer
	}
	d.Control, d.ControlContext = g.Control, nil
	conn, err := d.DialContext(ctx, network, address)
	var pe *PrivateAddressError
	if err != nil && errors.As(err, &pe) {
		refused := *pe
		refused.Host, _, _ = net.SplitHostPort(address)
		return nil, &refused
	}
	return conn, err
}

// Transport returns a clone of base (http.DefaultTransport when nil) that
// dials through the guard. Its proxy is switched off, since a proxy would
// connect to the destination itself, past the guard; a base with its own
// DialTLSContext or DialTLS is an error, for the same reason.
func (g *Guard) Transport(base *http.Transport) (*http.Transport, error) {
	if base == nil {
		base = http.DefaultTransport.(*http.Transport)
	}
	if base.DialTLSContext != nil || base.DialTLS != nil { //nolint:staticcheck // DialTLS is checked, not used
		return nil, errors.New("fetch: Guard: the transport dials TLS itself, past the guard; unset DialTLSContext")
	}
	t := base.Clone()
	t.Proxy = nil
	t.DialContext = g.DialContext
	t.Dial = nil //nolint:staticcheck // cleared so DialContext is used
	return t, nil
}
