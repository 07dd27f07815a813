package geonode

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
	"time"
)

// The request and response bodies of the API, as in geonode-api.md. Every
// response field is optional on decoding: the docs show several of them
// only in some examples.

type proxyJSON struct {
	Country *string `json:"country"`
	Type    string  `json:"type,omitempty"`
}

type waitJSON struct {
	WaitUntil   string `json:"wait_until,omitempty"`
	WaitFor     string `json:"wait_for,omitempty"`
	WaitTimeout int64  `json:"wait_timeout,omitempty"` // milliseconds
}

// pageSettings are the fields extract and batch share.
type pageSettings struct {
	Formats    []Format          `json:"formats"`
	RenderJS   bool              `json:"render_js"`
	Proxy      *proxyJSON        `json:"proxy,omitempty"`
	Headers    map[string]string `json:"headers,omitempty"`
	WaitConfig *waitJSON         `json:"wait_config,omitempty"`
}

type extractRequest struct {
	URL            string `json:"url"`
	ProcessingMode string `json:"processing_mode"`
	pageSettings
}

type batchRequest struct {
	URLs              []string `json:"urls"`
	IgnoreInvalidURLs bool     `json:"ignore_invalid_urls"`
	pageSettings
}

type mapRequest struct {
	URL                   string `json:"url"`
	IncludeSubdomains     bool   `json:"include_subdomains"`
	IgnoreQueryParameters bool   `json:"ignore_query_parameters"`
}

// flexInt decodes a JSON number (integral float included), a numeric
// string or null; anything else is an error. Out-of-range values clamp.
type flexInt struct {
	v   int
	set bool
}

func (f *flexInt) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if string(b) == "null" {
		*f = flexInt{}
		return nil
	}
	s := string(b)
	if len(b) > 0 && b[0] == '"' {
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		s = strings.TrimSpace(s)
	}
	x, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(x) || x != math.Trunc(x) {
		return errors.New("not an integer: " + snippet(b))
	}
	x = math.Max(math.Min(x, math.MaxInt32), math.MinInt32)
	*f = flexInt{v: int(x), set: true}
	return nil
}

// flexString decodes a string, or null as "", or a number or bool as its
// JSON text (codes have been seen as numbers in similar APIs).
type flexString string

func (f *flexString) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case string(b) == "null":
		*f = ""
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*f = flexString(s)
	case len(b) > 0 && (b[0] == '{' || b[0] == '['):
		return errors.New("not a string: " + snippet(b))
	default:
		*f = flexString(b)
	}
	return nil
}

// flexBool decodes true/false, null (unset) and "true"/"false".
type flexBool struct {
	v   bool
	set bool
}

func (f *flexBool) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(bytes.TrimSpace(b)), `"`)
	switch strings.ToLower(s) {
	case "null", "":
		*f = flexBool{}
	case "true":
		*f = flexBool{v: true, set: true}
	case "false":
		*f = flexBool{v: false, set: true}
	default:
		return errors.New("not a boolean: " + snippet(b))
	}
	return nil
}

type contentJSON struct {
	Markdown *string `json:"markdown"`
	HTML     *string `json:"html"`
}

type metadataJSON struct {
	URL           flexString `json:"url"`
	HTTPStatus    flexInt    `json:"http_status"`
	TokensCharged flexInt    `json:"tokens_charged"` // batch items carry it here
}

type extractResult struct {
	Data          *contentJSON  `json:"data"`
	Metadata      *metadataJSON `json:"metadata"`
	TokensCharged flexInt       `json:"tokens_charged"`
}

type jobAccepted struct {
	JobID     flexString `json:"job_id"`
	Status    flexString `json:"status"`
	StatusURL flexString `json:"status_url"`
}

type jobErrorJSON struct {
	Code      flexString `json:"code"`
	Message   flexString `json:"message"`
	Retryable flexBool   `json:"retryable"`
}

type extractJob struct {
	JobID         flexString    `json:"job_id"`
	Status        flexString    `json:"status"`
	Data          *contentJSON  `json:"data"`
	Metadata      *metadataJSON `json:"metadata"`
	Error         *jobErrorJSON `json:"error"`
	TokensCharged flexInt       `json:"tokens_charged"`
}

type batchAccepted struct {
	JobID        flexString        `json:"job_id"`
	Status       flexString        `json:"status"`
	StatusURL    flexString        `json:"status_url"`
	AcceptedURLs flexInt           `json:"accepted_urls"`
	InvalidURLs  []json.RawMessage `json:"invalid_urls"`
}

type batchItemJSON struct {
	InputIndex   flexInt       `json:"input_index"`
	URL          flexString    `json:"url"`
	Status       flexString    `json:"status"`
	ErrorCode    flexString    `json:"error_code"`
	ErrorMessage flexString    `json:"error_message"`
	Data         *contentJSON  `json:"data"`
	Metadata     *metadataJSON `json:"metadata"`
}

type batchStatus struct {
	JobID         flexString      `json:"job_id"`
	Status        flexString      `json:"status"`
	TotalURLs     flexInt         `json:"total_urls"`
	CompletedURLs flexInt         `json:"completed_urls"`
	FailedURLs    flexInt         `json:"failed_urls"`
	CancelledURLs flexInt         `json:"cancelled_urls"`
	Results       []batchItemJSON `json:"results"`
}

type mapLinkJSON struct {
	URL    flexString `json:"url"`
	Source flexString `json:"source"`
}

type mapResponse struct {
	Success flexBool      `json:"success"`
	Links   []mapLinkJSON `json:"links"`
	Warning flexString    `json:"warning"`
}

// apiErrorJSON is the union of both error body shapes. detail is a list
// of validation problems in FastAPI's shape, or a plain string (FastAPI's
// HTTPException, e.g. {"detail":"Not Found"}).
type apiErrorJSON struct {
	Code          flexString      `json:"code"`
	Message       flexString      `json:"message"`
	CorrelationID flexString      `json:"correlation_id"`
	Retryable     flexBool        `json:"retryable"`
	Detail        json.RawMessage `json:"detail"`
	// Some gateways nest the application error under "error".
	Error json.RawMessage `json:"error"`
}

type detailJSON struct {
	Loc  []json.RawMessage `json:"loc"`
	Msg  flexString        `json:"msg"`
	Type flexString        `json:"type"`
}

// decodeJSON decodes one JSON value of body into v. Unknown fields are
// ignored (the API adds fields over time); trailing data is an error.
func decodeJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data after the JSON value")
	}
	return nil
}

// decodeAPIError builds an *APIError from a non-2xx answer. It never fails:
// an undecodable body leaves the code and message empty (the message then
// quotes the body's start).
func decodeAPIError(op, pageURL string, status int, body []byte, retryAfter time.Duration) *APIError {
	e := &APIError{Op: op, URL: pageURL, Status: status, Retryable: status == 429 || status >= 500}
	if retryAfter > 0 {
		e.RetryAfter = retryAfter
	}
	var raw apiErrorJSON
	if err := decodeJSON(body, &raw); err != nil {
		if t := strings.TrimSpace(snippet(body)); t != "" {
			e.Message = t
		}
		return e
	}
	if raw.Code == "" && raw.Message == "" && len(raw.Error) > 0 {
		var inner apiErrorJSON
		if decodeJSON(raw.Error, &inner) == nil {
			raw.Code, raw.Message, raw.Retryable = inner.Code, inner.Message, inner.Retryable
			if raw.CorrelationID == "" {
				raw.CorrelationID = inner.CorrelationID
			}
		}
	}
	e.Code, e.Message, e.CorrelationID = string(raw.Code), string(raw.Message), string(raw.CorrelationID)
	if raw.Retryable.set {
		e.Retryable = raw.Retryable.v
	}
	if len(raw.Detail) > 0 {
		var list []detailJSON
		var text string
		switch {
		case json.Unmarshal(raw.Detail, &list) == nil:
			for _, d := range list {
				vd := ValidationDetail{Msg: string(d.Msg), Type: string(d.Type)}
				for _, l := range d.Loc {
					var s string
					if json.Unmarshal(l, &s) != nil {
						s = string(l)
					}
					vd.Loc = append(vd.Loc, s)
				}
				e.Detail = append(e.Detail, vd)
			}
		case json.Unmarshal(raw.Detail, &text) == nil && e.Message == "":
			e.Message = text
		}
	}
	return e
}

// invalidEntry reads one element of invalid_urls: a string, or an object
// with the URL under "url" (or "input") and a reason under "reason",
// "error", "message" or "msg", and maybe an index. The element type is
// [UNCONFIRMED] in the docs.
func invalidEntry(raw json.RawMessage) (u, reason string, index int, ok bool) {
	index = -1
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s, "", -1, true
	}
	var obj struct {
		URL        flexString `json:"url"`
		Input      flexString `json:"input"`
		Reason     flexString `json:"reason"`
		Error      flexString `json:"error"`
		Message    flexString `json:"message"`
		Msg        flexString `json:"msg"`
		InputIndex flexInt    `json:"input_index"`
		Index      flexInt    `json:"index"`
	}
	if json.Unmarshal(raw, &obj) != nil {
		return "", "", -1, false
	}
	u = string(obj.URL)
	if u == "" {
		u = string(obj.Input)
	}
	for _, r := range []flexString{obj.Reason, obj.Error, obj.Message, obj.Msg} {
		if r != "" {
			reason = string(r)
			break
		}
	}
	switch {
	case obj.InputIndex.set:
		index = obj.InputIndex.v
	case obj.Index.set:
		index = obj.Index.v
	}
	return u, reason, index, u != "" || index >= 0
}
