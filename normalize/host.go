package normalize

import (
	"net/netip"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// idnaProfile converts international host names to ASCII the way browsers
// do (UTS #46, non-transitional, as the WHATWG URL standard specifies):
// "ß" stays distinct from "ss", labels are mapped (case folded, width
// normalized) and validated, and STD3 rules are off so that "_" passes.
var idnaProfile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.BidiRule(),
	idna.StrictDomainName(false),
	idna.CheckHyphens(false),
)

const (
	maxHostLen  = 253 // DNS limit on a name, without its trailing dot
	maxLabelLen = 63  // DNS limit on one label
)

// appendAuthority appends the normalized host and port of auth (the text
// between "//" and the path) to dst. It rejects userinfo, empty or invalid
// hosts and invalid ports, and drops the scheme's default port.
func appendAuthority(dst []byte, auth string, https bool) ([]byte, *Error) {
	if at := strings.LastIndexByte(auth, '@'); at >= 0 {
		return dst, errf(ErrUserinfo, "remove \""+auth[:at+1]+"\": credentials do not belong in a page's identity")
	}
	host, port := auth, ""
	if strings.HasPrefix(auth, "[") {
		end := strings.IndexByte(auth, ']')
		if end < 0 {
			return dst, errf(ErrHost, "IPv6 literal "+strconv.Quote(auth)+" has no closing \"]\"")
		}
		host = auth[:end+1]
		rest := auth[end+1:]
		if rest != "" {
			if rest[0] != ':' {
				return dst, errf(ErrHost, "unexpected "+strconv.Quote(rest)+" after IPv6 literal")
			}
			port = rest[1:]
		}
		var err *Error
		if dst, err = appendIPv6(dst, host); err != nil {
			return dst, err
		}
	} else {
		if colon := strings.LastIndexByte(auth, ':'); colon >= 0 {
			host, port = auth[:colon], auth[colon+1:]
		}
		var err *Error
		if dst, err = appendRegName(dst, host); err != nil {
			return dst, err
		}
	}
	return appendPort(dst, port, https)
}

func appendIPv6(dst []byte, lit string) ([]byte, *Error) {
	inner := lit[1 : len(lit)-1]
	if strings.IndexByte(inner, '%') >= 0 {
		return dst, errf(ErrHost, "IPv6 zone in "+strconv.Quote(lit)+" only means something on one machine")
	}
	addr, err := netip.ParseAddr(inner)
	if err != nil || !addr.Is6() {
		return dst, errf(ErrHost, strconv.Quote(lit)+" is not an IPv6 address")
	}
	dst = append(dst, '[')
	dst = addr.AppendTo(dst)
	return append(dst, ']'), nil
}

// appendRegName appends the normalized registered name (or IPv4 address)
// host: percent-escapes decoded, lowercased, international names converted
// to punycode.
func appendRegName(dst []byte, host string) ([]byte, *Error) {
	if host == "" {
		return dst, errf(ErrHost, "the host is empty")
	}
	// Fast path: plain ASCII letters, digits, '-', '.', '_'.
	plain := true
	for i := 0; i < len(host); i++ {
		if !hostByte[host[i]] {
			plain = false
			break
		}
	}
	name := host
	if !plain {
		var err *Error
		if name, err = decodeHost(host); err != nil {
			return dst, err
		}
	}
	start := len(dst)
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst, checkLabels(dst[start:], host)
}

// decodeHost percent-decodes host and converts a non-ASCII name to ASCII.
func decodeHost(host string) (string, *Error) {
	name := host
	if strings.IndexByte(host, '%') >= 0 {
		b := make([]byte, 0, len(host))
		for i := 0; i < len(host); i++ {
			c := host[i]
			if c == '%' {
				if i+2 >= len(host) || !isHex(host[i+1]) || !isHex(host[i+2]) {
					return "", errf(ErrHost, "invalid percent-escape in host "+strconv.Quote(host))
				}
				c = unhex(host[i+1])<<4 | unhex(host[i+2])
				i += 2
			}
			b = append(b, c)
		}
		name = string(b)
	}
	ascii := true
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if !ascii {
		if !utf8.ValidString(name) {
			return "", errf(ErrHost, "host "+strconv.Quote(host)+" is not valid UTF-8")
		}
		a, err := idnaProfile.ToASCII(name)
		if err != nil {
			return "", errf(ErrHost, "international name "+strconv.Quote(name)+" cannot be converted to ASCII: "+err.Error())
		}
		name = a
	}
	for i := 0; i < len(name); i++ {
		if !hostByte[name[i]] {
			return "", errf(ErrHost, "character "+strconv.QuoteRune(rune(name[i]))+" is not allowed in host "+strconv.Quote(name))
		}
	}
	return name, nil
}

// checkLabels applies the DNS length limits and rejects empty labels; one
// trailing dot (a fully qualified name) is allowed. orig names the host in
// messages.
func checkLabels(name []byte, orig string) *Error {
	n := len(name)
	if n > 0 && name[n-1] == '.' {
		n--
	}
	if n == 0 {
		return errf(ErrHost, "the host "+strconv.Quote(orig)+" has no name")
	}
	if n > maxHostLen {
		return errf(ErrHost, "the host is "+strconv.Itoa(n)+" bytes long; DNS allows 253")
	}
	label := 0
	for i := 0; i <= n; i++ {
		if i < n && name[i] != '.' {
			label++
			continue
		}
		if label == 0 {
			return errf(ErrHost, "the host "+strconv.Quote(orig)+" has an empty label")
		}
		if label > maxLabelLen {
			return errf(ErrHost, "a label of host "+strconv.Quote(orig)+" is "+strconv.Itoa(label)+" bytes long; DNS allows 63")
		}
		label = 0
	}
	return nil
}

// appendPort appends ":port" unless the port is empty or the scheme's
// default. Leading zeros are dropped.
func appendPort(dst []byte, port string, https bool) ([]byte, *Error) {
	if port == "" {
		return dst, nil
	}
	v := 0
	for i := 0; i < len(port); i++ {
		c := port[i]
		if c < '0' || c > '9' {
			return dst, errf(ErrPort, strconv.Quote(port)+" is not a number")
		}
		v = v*10 + int(c-'0')
		if v > 65535 {
			return dst, errf(ErrPort, strconv.Quote(port)+" is above 65535")
		}
	}
	if v == 0 {
		return dst, errf(ErrPort, "port 0 cannot be fetched")
	}
	if https && v == 443 || !https && v == 80 {
		return dst, nil
	}
	dst = append(dst, ':')
	return strconv.AppendInt(dst, int64(v), 10), nil
}
