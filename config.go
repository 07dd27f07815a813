package recrawl

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/fingerprint"
	"github.com/recrawl/recrawl/normalize"
	"github.com/recrawl/recrawl/schedule"
)

// Defaults of Config's zero fields.
const (
	DefaultWorkers     = 4
	DefaultMissingRuns = 3
	DefaultBatchSize   = 500
	DefaultLockTTL     = 15 * time.Minute
	DefaultJitter      = 0.1
)

// Config configures an Engine. Only State is required; every other zero
// field takes a documented default. New validates the whole Config once.
type Config struct {
	// State stores per-URL state between runs. Required.
	State crawlstate.State

	// Fetcher gets pages. Default: a fetch.HTTP using HTTPClient, Clock,
	// UserAgent and Logger.
	Fetcher fetch.Fetcher
	// HTTPClient is the base client for discovery documents and the
	// default fetcher (default: a client on http.DefaultTransport).
	HTTPClient *http.Client
	// UserAgent is sent with every request the engine makes.
	UserAgent string

	// Limits are the instance-wide caps (default DefaultLimits(); read
	// them from the environment with LimitsFromEnv).
	Limits *Limits

	// Scheduler chooses revisit intervals (default schedule.DefaultHalving).
	Scheduler schedule.Scheduler
	// Normalize is the URL policy that gives pages their identity.
	Normalize normalize.Policy
	// Fingerprint strips volatile blocks before hashing: Base rules for
	// every host (default fingerprint.Default) plus per-host extras.
	Fingerprint fingerprint.Set

	// Jitter spreads revisits: a row's next check comes up to this fraction
	// of its interval early, by an amount fixed per URL and visit, so pages
	// found together do not stay due together forever (default 0.1; set a
	// negative value for none).
	Jitter float64

	// Workers bounds concurrent page fetches (default 4).
	Workers int
	// MissingRuns is how many discovery runs a URL may be absent before a
	// fetch confirms whether it still exists (default 3).
	MissingRuns int
	// BatchSize is how many due rows are loaded from state at a time
	// (default 500).
	BatchSize int
	// LockTTL is how long a run lock lasts without being refreshed; a
	// crashed run's lock expires after it (default 15 minutes).
	LockTTL time.Duration

	// Clock drives every timestamp and wait (default: the system clock).
	Clock clock.Clock
	// Logger receives diagnostics (default: discard).
	Logger *slog.Logger
	// Observer, when set, receives an Event per URL outcome. Calls are
	// serialized; the observer must not block for long.
	Observer func(Event)
}

// ConfigError lists everything wrong with a Config.
type ConfigError struct {
	Problems []ConfigProblem
}

// ConfigProblem is one invalid Config field.
type ConfigProblem struct {
	Field  string
	Reason string
}

func (e *ConfigError) Error() string {
	parts := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		parts[i] = p.Field + ": " + p.Reason
	}
	return "recrawl: invalid config: " + strings.Join(parts, "; ")
}

func (e *ConfigError) add(field, format string, args ...any) {
	e.Problems = append(e.Problems, ConfigProblem{Field: field, Reason: fmt.Sprintf(format, args...)})
}

// validate checks c and fills in defaults; it returns a *ConfigError
// naming every invalid field.
func (c *Config) validate() error {
	var ce ConfigError
	if c.State == nil {
		ce.add("State", "required: open one with crawlstate.OpenSQLite")
	}
	if c.Workers < 0 {
		ce.add("Workers", "must be >= 0 (0 means %d), got %d", DefaultWorkers, c.Workers)
	}
	if c.MissingRuns < 0 {
		ce.add("MissingRuns", "must be >= 0 (0 means %d), got %d", DefaultMissingRuns, c.MissingRuns)
	}
	if c.BatchSize < 0 {
		ce.add("BatchSize", "must be >= 0 (0 means %d), got %d", DefaultBatchSize, c.BatchSize)
	}
	if c.LockTTL < 0 {
		ce.add("LockTTL", "must be >= 0 (0 means %s), got %s", DefaultLockTTL, c.LockTTL)
	}
	if c.Jitter >= 1 {
		ce.add("Jitter", "must be below 1 (a fraction of the interval), got %g", c.Jitter)
	}
	if c.Limits != nil {
		if err := c.Limits.validate(); err != nil {
			ce.add("Limits", "%v", err)
		}
	}
	if strings.ContainsAny(c.UserAgent, "\r\n") {
		ce.add("UserAgent", "must be one line")
	}
	if len(ce.Problems) > 0 {
		return &ce
	}
	if c.Workers == 0 {
		c.Workers = DefaultWorkers
	}
	if c.MissingRuns == 0 {
		c.MissingRuns = DefaultMissingRuns
	}
	if c.BatchSize == 0 {
		c.BatchSize = DefaultBatchSize
	}
	if c.LockTTL == 0 {
		c.LockTTL = DefaultLockTTL
	}
	switch {
	case c.Jitter == 0:
		c.Jitter = DefaultJitter
	case c.Jitter < 0:
		c.Jitter = 0
	}
	if c.UserAgent == "" {
		c.UserAgent = fetch.DefaultUserAgent
	}
	if c.Limits == nil {
		l := DefaultLimits()
		c.Limits = &l
	} else {
		l := *c.Limits // the engine keeps its own copy
		c.Limits = &l
	}
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.Scheduler == nil {
		c.Scheduler = schedule.DefaultHalving
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	return nil
}
