package embed

import (
	"errors"
	"fmt"
)

// ErrNoAPIKey is returned by APIKeyFromEnv when the variable is unset or empty.
var ErrNoAPIKey = errors.New("embed: no API key in the environment")

// ConfigError reports an invalid embedder configuration.
type ConfigError struct {
	Field  string // the offending field, e.g. "BaseURL"
	Reason string // what is wrong and what to change
}

// Error implements error.
func (e *ConfigError) Error() string {
	return fmt.Sprintf("embed: invalid config %s: %s", e.Field, e.Reason)
}

// APIError is a non-2xx answer from an embeddings endpoint, decoded from the
// OpenAI error shape {"error":{"message","type","code"}} when the body has it.
type APIError struct {
	Status  int    // HTTP status code
	Type    string // error.type, e.g. "invalid_request_error"; may be empty
	Code    string // error.code, e.g. "invalid_api_key"; may be empty
	Message string // error.message, or the start of the body when not JSON
}

// Error implements error.
func (e *APIError) Error() string {
	s := fmt.Sprintf("embed: endpoint answered HTTP %d", e.Status)
	if e.Type != "" || e.Code != "" {
		s += " (" + e.Type
		if e.Type != "" && e.Code != "" {
			s += ", "
		}
		s += e.Code + ")"
	}
	if e.Message != "" {
		s += ": " + e.Message
	}
	return s
}

// Temporary reports whether the request may succeed if sent again later:
// 408, 429 and 5xx other than 501 and 505.
func (e *APIError) Temporary() bool { return retryableStatus(e.Status) }

// CountError reports a response with a different number of vectors than
// inputs sent. It is never retried and never truncated silently.
type CountError struct {
	Want, Got int
}

// Error implements error.
func (e *CountError) Error() string {
	return fmt.Sprintf("embed: endpoint returned %d vectors for %d inputs", e.Got, e.Want)
}

// DimensionError reports a vector whose length is not the configured
// Dimensions. Check the model name and the Dimensions setting.
type DimensionError struct {
	Index     int // position of the vector among the inputs of the call
	Want, Got int
}

// Error implements error.
func (e *DimensionError) Error() string {
	return fmt.Sprintf("embed: vector %d has %d dimensions, want %d (check Model and Dimensions)", e.Index, e.Got, e.Want)
}

// ResponseError reports a 2xx response that is not a valid embeddings
// answer: bad JSON, an index out of range or repeated, a body over the
// size limit, or a non-finite value.
type ResponseError struct {
	Reason string
	Err    error // the underlying decoding error, if any
}

// Error implements error.
func (e *ResponseError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("embed: invalid embeddings response: %s: %v", e.Reason, e.Err)
	}
	return "embed: invalid embeddings response: " + e.Reason
}

// Unwrap returns the underlying error.
func (e *ResponseError) Unwrap() error { return e.Err }
