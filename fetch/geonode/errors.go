package geonode

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// Sentinels matched by errors.Is against an *APIError (by its status) and
// the other error types of this package.
var (
	// ErrUnauthorized: 401, the API key is missing or invalid. Fatal.
	ErrUnauthorized = errors.New("geonode: API key missing or invalid")
	// ErrPaymentRequired: 402, the account's request balance is exhausted.
	// Fatal: a run must stop instead of failing every page.
	ErrPaymentRequired = errors.New("geonode: request balance exhausted (payment required)")
	// ErrInvalidRequest: 400, or 422 with validation details: the request
	// itself is wrong and will not succeed when repeated.
	ErrInvalidRequest = errors.New("geonode: request rejected as invalid")
	// ErrExtractionFailed: a 422 that is not a validation error, a failed
	// async job or a failed batch item: Geonode could not extract the page.
	ErrExtractionFailed = errors.New("geonode: extraction failed")
	// ErrNotFound: 404, an unknown job id.
	ErrNotFound = errors.New("geonode: not found")
	// ErrTimeout: 408, the API gave up (map discovery timed out).
	ErrTimeout = errors.New("geonode: API timed out")
	// ErrConflict: 409, a job cannot be cancelled in its state.
	ErrConflict = errors.New("geonode: conflict with the job's state")
	// ErrRateLimited: 429, throttled or the plan's concurrency reached.
	ErrRateLimited = errors.New("geonode: rate limited")
	// ErrServer: a 5xx from the API.
	ErrServer = errors.New("geonode: server error")
	// ErrJobTimeout: an async extraction or batch job did not finish before
	// its deadline (*ExtractTimeoutError, *BatchTimeoutError).
	ErrJobTimeout = errors.New("geonode: job did not finish before its deadline")
	// ErrJobFailed: a batch job ended "failed" with URLs left without outcome.
	ErrJobFailed = errors.New("geonode: job failed")
	// ErrMalformedResponse: an API answer that cannot be decoded or lacks a
	// required field (*DecodeError).
	ErrMalformedResponse = errors.New("geonode: malformed API response")
	// ErrInvalidURL: a page URL that is not an absolute http(s) URL, found
	// locally or listed in a batch's invalid_urls.
	ErrInvalidURL = errors.New("geonode: invalid page URL")
)

// IsFatal reports whether err, or any error in its tree, has a method
// Fatal() bool that returns true: an error after which every later request
// of a run fails the same way (a bad key, an exhausted balance). An engine
// stops the run on such an error, so the remaining pages stay due instead of
// being recorded as failures one by one. It needs no import of this package:
// any error type may implement Fatal.
func IsFatal(err error) bool {
	if err == nil {
		return false
	}
	if f, ok := err.(interface{ Fatal() bool }); ok && f.Fatal() {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return IsFatal(u.Unwrap())
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if IsFatal(e) {
				return true
			}
		}
	}
	return false
}

// ValidationDetail is one entry of a FastAPI validation error body.
type ValidationDetail struct {
	// Loc is where the problem is, such as ["body", "urls", "3"].
	Loc []string
	// Msg says what is wrong; Type is the validator's name ("missing",
	// "too_short"...).
	Msg  string
	Type string
}

// String formats the detail as "loc.path: message (type)".
func (d ValidationDetail) String() string {
	return fmt.Sprintf("%s: %s (%s)", strings.Join(d.Loc, "."), d.Msg, d.Type)
}

// APIError is a non-2xx answer of the Geonode API itself (not of the
// origin). It decodes both body shapes: the application error
// {"code","message","correlation_id","retryable"} and FastAPI's validation
// error {"detail":[{"loc","msg","type"}]}.
type APIError struct {
	// Op is the API call, such as "POST /v1/extract".
	Op string
	// URL is the page concerned, when the call was about one page.
	URL string
	// Status is the API's HTTP status.
	Status int
	// Code, Message and CorrelationID come from the body (empty when absent).
	Code          string
	Message       string
	CorrelationID string
	// Retryable is the body's retryable flag; without one it is true for
	// 429 and 5xx.
	Retryable bool
	// Detail lists FastAPI validation problems.
	Detail []ValidationDetail
	// RetryAfter is the wait the last answer's Retry-After asked for (0
	// when absent).
	RetryAfter time.Duration
	// Attempts is how many requests were sent, retries included.
	Attempts int
}

// Error describes the failure.
func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "geonode: %s", e.Op)
	if e.URL != "" {
		fmt.Fprintf(&b, " (%s)", e.URL)
	}
	fmt.Fprintf(&b, ": HTTP %d %s", e.Status, http.StatusText(e.Status))
	if e.Code != "" {
		fmt.Fprintf(&b, " %s", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	for i, d := range e.Detail {
		if i == 3 {
			fmt.Fprintf(&b, "; and %d more", len(e.Detail)-3)
			break
		}
		fmt.Fprintf(&b, "; %s", d)
	}
	if e.CorrelationID != "" {
		fmt.Fprintf(&b, " (correlation id %s)", e.CorrelationID)
	}
	if e.Attempts > 1 {
		fmt.Fprintf(&b, " after %d attempts", e.Attempts)
	}
	switch e.Status {
	case http.StatusUnauthorized:
		b.WriteString(": check the API key (" + EnvAPIKey + ")")
	case http.StatusPaymentRequired:
		b.WriteString(": top up the request balance or upgrade the plan")
	case http.StatusTooManyRequests:
		b.WriteString(": lower the concurrency or the request rate")
	}
	return b.String()
}

// Is matches the sentinel of the error's status.
func (e *APIError) Is(target error) bool {
	switch target {
	case ErrUnauthorized:
		return e.Status == http.StatusUnauthorized
	case ErrPaymentRequired:
		return e.Status == http.StatusPaymentRequired
	case ErrInvalidRequest:
		return e.Status == http.StatusBadRequest || (e.Status == http.StatusUnprocessableEntity && e.validation())
	case ErrExtractionFailed:
		return e.Status == http.StatusUnprocessableEntity && !e.validation()
	case ErrNotFound:
		return e.Status == http.StatusNotFound
	case ErrTimeout:
		return e.Status == http.StatusRequestTimeout
	case ErrConflict:
		return e.Status == http.StatusConflict
	case ErrRateLimited:
		return e.Status == http.StatusTooManyRequests
	case ErrServer:
		return e.Status >= 500
	}
	return false
}

// validation tells a schema or plan-limit validation error from an
// extraction failure: both are 422 on extract. Which codes an extraction
// failure carries is [UNCONFIRMED]; a 422 counts as validation when it has
// FastAPI details or the one documented code, VALIDATION_ERROR.
func (e *APIError) validation() bool {
	return len(e.Detail) > 0 || strings.EqualFold(e.Code, "VALIDATION_ERROR")
}

// Fatal reports whether no later request can succeed: 401 (bad key) and
// 402 (balance exhausted). The engine stops a run on an error whose Fatal
// is true.
func (e *APIError) Fatal() bool {
	return e.Status == http.StatusUnauthorized || e.Status == http.StatusPaymentRequired
}

// Temporary reports whether a later attempt may succeed.
func (e *APIError) Temporary() bool { return e.Retryable }

// Item error codes set by this client (Geonode's own vocabulary is
// [UNCONFIRMED]; its codes are passed through as they come).
const (
	// CodeInvalidURL marks a URL rejected before extraction.
	CodeInvalidURL = "INVALID_URL"
	// CodeCancelled marks an async job cancelled by someone else.
	CodeCancelled = "CANCELLED"
)

// ItemError is the failure of one URL inside a job: a failed batch item, a
// URL listed in invalid_urls, or a failed or cancelled async extraction.
// It matches ErrExtractionFailed (ErrInvalidURL for CodeInvalidURL).
type ItemError struct {
	URL       string
	JobID     string
	Code      string
	Message   string
	Retryable bool
}

// Error describes the failure.
func (e *ItemError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "geonode: %s: ", e.URL)
	if e.Code == CodeInvalidURL {
		b.WriteString("invalid URL")
	} else {
		b.WriteString("extraction failed")
	}
	if e.Code != "" && e.Code != CodeInvalidURL {
		fmt.Fprintf(&b, " (%s)", e.Code)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	if e.JobID != "" {
		fmt.Fprintf(&b, " [job %s]", e.JobID)
	}
	return b.String()
}

// Is matches ErrExtractionFailed, or ErrInvalidURL for an invalid URL.
func (e *ItemError) Is(target error) bool {
	if e.Code == CodeInvalidURL {
		return target == ErrInvalidURL
	}
	return target == ErrExtractionFailed
}

// Fatal reports an item that failed for want of balance (code
// INSUFFICIENT_BALANCE or PAYMENT_REQUIRED; Geonode's item codes are
// [UNCONFIRMED], these are the fake server's and the likeliest).
func (e *ItemError) Fatal() bool {
	return strings.EqualFold(e.Code, "INSUFFICIENT_BALANCE") || strings.EqualFold(e.Code, "PAYMENT_REQUIRED")
}

// Temporary reports the item's retryable flag.
func (e *ItemError) Temporary() bool { return e.Retryable }

// ExtractTimeoutError is an async extraction still unfinished at its
// deadline. It matches ErrJobTimeout.
type ExtractTimeoutError struct {
	URL      string
	JobID    string
	Deadline time.Duration
}

// Error describes the failure.
func (e *ExtractTimeoutError) Error() string {
	return fmt.Sprintf("geonode: extraction of %s (job %s) unfinished after %s; raise the job deadline (WithJobDeadline) or use sync mode", e.URL, e.JobID, e.Deadline)
}

// Is matches ErrJobTimeout.
func (e *ExtractTimeoutError) Is(target error) bool { return target == ErrJobTimeout }

// BatchTimeoutError is a batch job still unfinished at its deadline. The
// job was cancelled; Pending URLs got no outcome and stay due. It matches
// ErrJobTimeout.
type BatchTimeoutError struct {
	JobID    string
	Pending  int
	Deadline time.Duration
	// Cancelled reports whether the DELETE was accepted.
	Cancelled bool
	// CancelErr is why the cancellation failed, if it did.
	CancelErr error
}

// Error describes the failure.
func (e *BatchTimeoutError) Error() string {
	s := fmt.Sprintf("geonode: batch job %s unfinished after %s: %d URL(s) left without outcome", e.JobID, e.Deadline, e.Pending)
	if e.Cancelled {
		s += "; job cancelled"
	} else if e.CancelErr != nil {
		s += "; cancelling it failed: " + e.CancelErr.Error()
	}
	return s + "; raise the batch deadline (WithBatchDeadline) or send smaller batches (WithBatchSize)"
}

// Is matches ErrJobTimeout.
func (e *BatchTimeoutError) Is(target error) bool { return target == ErrJobTimeout }

// Unwrap returns CancelErr.
func (e *BatchTimeoutError) Unwrap() error { return e.CancelErr }

// DecodeError is an API answer that could not be decoded, or that lacks a
// field the client needs. It matches ErrMalformedResponse.
type DecodeError struct {
	Op     string
	Status int
	Reason string
	// Snippet is the start of the body, for diagnosis.
	Snippet string
	Err     error
}

// Error describes the failure.
func (e *DecodeError) Error() string {
	s := fmt.Sprintf("geonode: %s: malformed answer (HTTP %d): %s", e.Op, e.Status, e.Reason)
	if e.Err != nil {
		s += ": " + e.Err.Error()
	}
	if e.Snippet != "" {
		s += fmt.Sprintf(" (body starts %q)", e.Snippet)
	}
	return s
}

// Is matches ErrMalformedResponse.
func (e *DecodeError) Is(target error) bool { return target == ErrMalformedResponse }

// Unwrap returns the underlying cause, for errors.Is and errors.As.
func (e *DecodeError) Unwrap() error { return e.Err }

func snippet(b []byte) string {
	const n = 120
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}
