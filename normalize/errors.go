package normalize

import (
	"errors"
	"strconv"
)

// Reasons a URL is rejected. Every error returned by this package is an
// *Error whose Reason is one of these; test with errors.Is.
var (
	// ErrParse: the string is not a URL (control character, malformed
	// IPv6 literal, no "//" after the scheme, too long).
	ErrParse = errors.New("malformed URL")
	// ErrScheme: the scheme is missing or is not http or https.
	ErrScheme = errors.New("unsupported scheme")
	// ErrUserinfo: the URL carries a user name or password ("user:pass@").
	ErrUserinfo = errors.New("userinfo not allowed")
	// ErrHost: the host is empty or is not a valid host name or IP literal.
	ErrHost = errors.New("invalid host")
	// ErrPort: the port is not a number from 1 to 65535.
	ErrPort = errors.New("invalid port")
)

// Error reports why a URL or a link reference could not be normalized.
type Error struct {
	// Raw is the input that was rejected: the URL given to URL, or the
	// reference given to Resolve.
	Raw string
	// Base is the base URL given to Resolve; empty for URL.
	Base string
	// Reason is one of the Err* sentinels.
	Reason error
	// Detail says what exactly was wrong, and with Resolve whether the
	// base or the reference was at fault.
	Detail string
}

// Error returns a message naming the input, the reason and the detail.
func (e *Error) Error() string {
	msg := "normalize " + strconv.Quote(e.Raw)
	if e.Base != "" {
		msg += " (base " + strconv.Quote(e.Base) + ")"
	}
	msg += ": " + e.Reason.Error()
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap returns Reason, so errors.Is(err, ErrHost) works.
func (e *Error) Unwrap() error { return e.Reason }

func errf(reason error, detail string) *Error {
	return &Error{Reason: reason, Detail: detail}
}
