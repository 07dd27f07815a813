package fetch_test

import (
	"context"
	"encoding/binary"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"golang.org/x/net/dns/dnsmessage"

	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/internal/testsite"
)

func TestPrivateClass(t *testing.T) {
	tests := []struct {
		addr  string
		class string
	}{
		{"127.0.0.1", "loopback"},
		{"127.255.255.254", "loopback"},
		{"::1", "loopback"},
		{"::ffff:127.0.0.1", "loopback"},
		{"10.0.0.1", "private"},
		{"10.255.255.255", "private"},
		{"172.16.0.1", "private"},
		{"172.31.255.255", "private"},
		{"192.168.1.1", "private"},
		{"::ffff:192.168.1.1", "private"},
		{"169.254.0.1", "link-local"},
		{"fe80::1", "link-local"},
		{"fe80::1%eth0", "link-local"},
		{"fec0::1", "link-local"},
		{"fc00::1", "unique-local"},
		{"fd12:3456::1", "unique-local"},
		{"100.64.0.1", "cgnat"},
		{"100.127.255.255", "cgnat"},
		{"169.254.169.254", "metadata"},
		{"::ffff:169.254.169.254", "metadata"},
		{"fd00:ec2::254", "metadata"},
		{"100.100.100.200", "metadata"},
		{"0.0.0.0", "unspecified"},
		{"0.1.2.3", "unspecified"},
		{"::", "unspecified"},
		{"224.0.0.1", "multicast"},
		{"239.255.255.250", "multicast"},
		{"ff02::1", "multicast"},
		{"255.255.255.255", "reserved"},
		{"240.0.0.1", "reserved"},
		{"192.0.2.10", "reserved"},
		{"198.18.0.1", "reserved"},
		{"2001:db8::1", "reserved"},
		{"64:ff9b::a00:1", "private"},     // NAT64 of 10.0.0.1
		{"64:ff9b::7f00:1", "loopback"},   // NAT64 of 127.0.0.1
		{"2002:a9fe:a9fe::1", "metadata"}, // 6to4 of 169.254.169.254
		// Public addresses.
		{"8.8.8.8", ""},
		{"1.1.1.1", ""},
		{"93.184.216.34", ""},
		{"172.15.255.255", ""},
		{"172.32.0.0", ""},
		{"100.63.255.255", ""},
		{"100.128.0.0", ""},
		{"192.169.0.1", ""},
		{"169.253.255.255", ""},
		{"11.0.0.1", ""},
		{"2606:4700:4700::1111", ""},
		{"2a00:1450:4001::1", ""},
		{"64:ff9b::808:808", ""}, // NAT64 of 8.8.8.8
		{"::ffff:8.8.8.8", ""},
	}
	for _, tc := range tests {
		t.Run(tc.addr, func(t *testing.T) {
			a := netip.MustParseAddr(tc.addr)
			require.Equal(t, tc.class, fetch.PrivateClass(a))
			err := (&fetch.Guard{}).Check(net.JoinHostPort(tc.addr, "443"))
			if tc.class == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, fetch.ErrPrivateAddress)
			var pe *fetch.PrivateAddressError
			require.ErrorAs(t, err, &pe)
			require.Equal(t, tc.class, pe.Class)
			require.Contains(t, err.Error(), pe.Addr.String())
		})
	}
}

// stubResolver answers every A and AAAA query with addrs, speaking DNS
// over an in-memory pipe: no packet leaves the process.
func stubResolver(t *testing.T, addrs ...string) (*net.Resolver, func() []string) {
	var mu sync.Mutex
	var asked []string
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, address string) (net.Conn, error) {
		client, server := net.Pipe()
		go func() {
			defer server.Close()
			for {
				var n uint16
				if err := binary.Read(server, binary.BigEndian, &n); err != nil {
					return
				}
				buf := make([]byte, n)
				if _, err := io.ReadFull(server, buf); err != nil {
					return
				}
				var q dnsmessage.Message
				if err := q.Unpack(buf); err != nil || len(q.Questions) != 1 {
					return
				}
				qq := q.Questions[0]
				mu.Lock()
				asked = append(asked, qq.Name.String())
				mu.Unlock()
				resp := dnsmessage.Message{Header: dnsmessage.Header{ID: q.ID, Response: true, Authoritative: true}, Questions: q.Questions}
				for _, s := range addrs {
					a := netip.MustParseAddr(s)
					h := dnsmessage.ResourceHeader{Name: qq.Name, Class: dnsmessage.ClassINET, TTL: 60}
					switch {
					case a.Is4() && qq.Type == dnsmessage.TypeA:
						h.Type = dnsmessage.TypeA
						resp.Answers = append(resp.Answers, dnsmessage.Resource{Header: h, Body: &dnsmessage.AResource{A: a.As4()}})
					case a.Is6() && qq.Type == dnsmessage.TypeAAAA:
						h.Type = dnsmessage.TypeAAAA
						resp.Answers = append(resp.Answers, dnsmessage.Resource{Header: h, Body: &dnsmessage.AAAAResource{AAAA: a.As16()}})
					}
				}
				out, err := resp.Pack()
				if err != nil {
					return
				}
				if err := binary.Write(server, binary.BigEndian, uint16(len(out))); err != nil {
					return
				}
				if _, err := server.Write(out); err != nil {
					return
				}
			}
		}()
		return client, nil
	}}
	return r, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), asked...)
	}
}

// A name that resolves to a private address is refused after resolution,
// before anything is sent. The stub resolves to loopback only, so a guard
// that failed would reach the test site, never another host.
func TestGuardRefusesANameResolvingToAPrivateAddress(t *testing.T) {
	s := newSite(t, testsite.Options{Pages: 1})
	_, port, err := net.SplitHostPort(strings.TrimPrefix(s.URL(), "http://"))
	require.NoError(t, err)
	res, asked := stubResolver(t, "127.0.0.1")
	g := &fetch.Guard{Dialer: &net.Dialer{Resolver: res}}
	tr, err := g.Transport(nil)
	require.NoError(t, err)
	h := &fetch.HTTP{Client: &http.Client{Transport: tr}, MaxAttempts: 1}
	_, err = h.Fetch(context.Background(), fetch.Request{URL: "http://docs.example.test:" + port + s.Paths()[0]})
	require.ErrorIs(t, err, fetch.ErrPrivateAddress)
	var pe *fetch.PrivateAddressError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "docs.example.test", pe.Host)
	require.Equal(t, netip.MustParseAddr("127.0.0.1"), pe.Addr)
	require.Equal(t, "loopback", pe.Class)
	require.Contains(t, err.Error(), "127.0.0.1 for docs.example.test")
	require.Contains(t, asked(), "docs.example.test.", "the name went through the resolver")
	require.Empty(t, s.Requests(), "nothing reached the site")

	// The same name, allowed, reaches the site: the refusal was the guard's.
	g.Allow = []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}
	resp, err := h.Fetch(context.Background(), fetch.Request{URL: "http://docs.example.test:" + port + s.Paths()[0]})
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.Status)
	require.Len(t, s.Requests(), 1)
}

// Every redirect is dialed through the guard too.
func TestGuardRefusesARedirectToAPrivateAddress(t *testing.T) {
	s := newSite(t, testsite.Options{Pages: 2})
	_, port, err := net.SplitHostPort(strings.TrimPrefix(s.URL(), "http://"))
	require.NoError(t, err)
	// The site itself is allowed; 127.0.0.2 (loopback, where nothing
	// listens) is not.
	g := &fetch.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	tr, err := g.Transport(s.Client().Transport.(*http.Transport))
	require.NoError(t, err)
	from := s.Paths()[0]
	s.Redirect(from, "http://127.0.0.2:"+port+s.Paths()[1])
	h := &fetch.HTTP{Client: &http.Client{Transport: tr}, MaxAttempts: 1, AllowOffHostRedirects: true}
	_, err = h.Fetch(context.Background(), fetch.Request{URL: s.PageURL(from)})
	var pe *fetch.PrivateAddressError
	require.ErrorAs(t, err, &pe)
	require.Equal(t, "127.0.0.2", pe.Addr.String())
	require.Equal(t, []string{from}, pathsOf(s.Requests()), "the first request was sent, the redirect was not")
}

func pathsOf(reqs []testsite.Request) []string {
	var out []string
	for _, r := range reqs {
		out = append(out, r.Path)
	}
	return out
}

func TestGuardTransportRefusesItsOwnTLSDialer(t *testing.T) {
	base := &http.Transport{DialTLSContext: func(context.Context, string, string) (net.Conn, error) { return nil, nil }}
	_, err := (&fetch.Guard{}).Transport(base)
	require.ErrorContains(t, err, "DialTLSContext")
}

// Polite tells Unsent about an admitted request the guard refused at dial
// time, so a caller counting Admit calls can count only what was sent; a
// refused dial is permanent, never retried.
func TestPoliteReportsRefusedDialsAsUnsent(t *testing.T) {
	s := newSite(t, testsite.Options{Pages: 2})
	_, port, err := net.SplitHostPort(strings.TrimPrefix(s.URL(), "http://"))
	require.NoError(t, err)
	g := &fetch.Guard{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	tr, err := g.Transport(s.Client().Transport.(*http.Transport))
	require.NoError(t, err)
	var mu sync.Mutex
	var admitted, unsent []string
	p := &fetch.Polite{Base: tr, IgnoreRobots: true,
		Admit: func(r *http.Request) error {
			mu.Lock()
			defer mu.Unlock()
			admitted = append(admitted, r.URL.Host)
			return nil
		},
		Unsent: func(r *http.Request, err error) {
			mu.Lock()
			defer mu.Unlock()
			require.ErrorIs(t, err, fetch.ErrPrivateAddress)
			unsent = append(unsent, r.URL.Host)
		}}
	from := s.Paths()[0]
	s.Redirect(from, "http://127.0.0.2:"+port+s.Paths()[1])
	h := &fetch.HTTP{Client: &http.Client{Transport: p}, AllowOffHostRedirects: true} // default attempts: 3
	_, err = h.Fetch(context.Background(), fetch.Request{URL: s.PageURL(from)})
	require.ErrorIs(t, err, fetch.ErrPrivateAddress)
	require.Equal(t, []string{"127.0.0.1:" + port, "127.0.0.2:" + port}, admitted, "one attempt: the refusal is not retried")
	require.Equal(t, []string{"127.0.0.2:" + port}, unsent)
	require.Len(t, s.Requests(), len(admitted)-len(unsent), "what was admitted and not unsent reached the site")
}
