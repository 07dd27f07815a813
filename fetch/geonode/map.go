package geonode

import (
	"context"
	"errors"
	"net/http"
	"strings"
)

// MapURLs lists the URLs of the site at siteURL with POST /v1/map: Geonode
// reads the site's sitemaps and the links of the page at siteURL (no
// rendering, no crawl). Query strings are dropped (ignore_query_parameters)
// and sibling subdomains are not probed unless WithIncludeSubdomains is on.
// The URLs come back in the API's order, without exact duplicates; an empty
// list is not an error (the API's warning, if any, is logged at info level).
//
// A slow discovery is an *APIError matching ErrTimeout (408), which is not
// retried; 429 and 5xx are. Whether mapping is billed is [UNCONFIRMED] (the
// answer has no tokens_charged).
func (c *Client) MapURLs(ctx context.Context, siteURL string) ([]string, error) {
	const op = "POST /v1/map"
	if err := checkPageURL(siteURL); err != nil {
		return nil, err
	}
	body := mapRequest{URL: siteURL, IncludeSubdomains: c.cfg.includeSubdomain, IgnoreQueryParameters: true}
	ans, _, err := c.do(ctx, call{method: http.MethodPost, path: "/v1/map", body: body, page: siteURL, retryTransport: true})
	if err != nil {
		return nil, err
	}
	var res mapResponse
	if err := decodeJSON(ans.body, &res); err != nil {
		return nil, &DecodeError{Op: op, Status: ans.status, Reason: "not a map result", Snippet: snippet(ans.body), Err: err}
	}
	if res.Success.set && !res.Success.v {
		reason := "success is false"
		if res.Warning != "" {
			reason += ": " + string(res.Warning)
		}
		return nil, &DecodeError{Op: op, Status: ans.status, Reason: reason, Err: errors.New("the API reported a failed mapping")}
	}
	if res.Warning != "" {
		c.cfg.logger.InfoContext(ctx, "geonode map warning", "site", siteURL, "warning", string(res.Warning))
	}
	out := make([]string, 0, len(res.Links))
	seen := make(map[string]struct{}, len(res.Links))
	for _, l := range res.Links {
		u := strings.TrimSpace(string(l.URL))
		if u == "" {
			continue
		}
		if _, dup := seen[u]; dup {
			continue
		}
		seen[u] = struct{}{}
		out = append(out, u)
	}
	return out, nil
}
