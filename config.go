package recrawl

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/recrawl/recrawl/alert"
	"github.com/recrawl/recrawl/chunk"
	"github.com/recrawl/recrawl/clock"
	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/embed"
	"github.com/recrawl/recrawl/fetch"
	"github.com/recrawl/recrawl/fingerprint"
	"github.com/recrawl/recrawl/index"
	"github.com/recrawl/recrawl/normalize"
	"github.com/recrawl/recrawl/schedule"
)

// Defaults of Config's zero fields.
const (
	DefaultWorkers         = 4
	DefaultMissingRuns     = 3
	DefaultBatchSize       = 500
	DefaultBatchThreshold  = 50
	DefaultLockTTL         = 15 * time.Minute
	DefaultJitter          = 0.1
	DefaultStageAttempts   = 3
	DefaultDeadLetterAfter = 3
)

// SitemapTrust says how far a sitemap's lastmod is believed.
type SitemapTrust int

const (
	// TrustLearned (the default): the engine measures, per source, how
	// often a moved lastmod (one after the row's last fetch) meant a real
	// change and how often a change came without one (Engine.LastModTrust,
	// kept in the state), and the scheduler weighs a row's lastmod by that
	// measured reliability (schedule.SitemapHint): a source whose lastmods
	// have proven right has a row fetched soon after its lastmod moves and
	// left alone while it does not; one that stamps the generation time on
	// every URL, or whose lastmods are stale, is as if it listed none. A
	// moved lastmod makes a row due now, ranked with the other due rows.
	TrustLearned SitemapTrust = iota
	// TrustHint: a moved lastmod makes a row due now, fetched before the
	// rows the scheduler ranks, and the adaptive schedule still revisits
	// every row.
	TrustHint
	// TrustAuthoritative: the sitemap is the truth. When its entry count and
	// newest lastmod equal the last run's (or it answers 304), the run ends
	// after robots.txt and the sitemap; otherwise only rows whose own
	// lastmod moved (and new rows) are fetched. A sitemap without any
	// lastmod has nothing to compare and is refetched in full every run.
	TrustAuthoritative
)

// CanonicalPolicy says what a page's declared rel=canonical means.
type CanonicalPolicy int

const (
	// CanonicalRecord (the default): identity stays the normalized fetched
	// URL; the declared canonical is stored and reported.
	CanonicalRecord CanonicalPolicy = iota
	// CanonicalFollow: a page that declares another same-host canonical
	// becomes an alias of it. The canonical URL is discovered in its place
	// and carries the content, index records and alerts; the alias row is
	// kept (and rechecked on its schedule) for diagnosis, and its outcome
	// is skipped with reason "alias". Identity changes only between runs:
	// the canonical is fetched as its own row.
	CanonicalFollow
)

// Config configures an Engine. Only State is required; every other zero
// field takes a documented default. New validates the whole Config once.
type Config struct {
	// State stores per-URL state between runs. Required. The engine
	// uses the optional abilities of crawlstate it finds by type
	// assertion and does without the others, as crawlstate documents;
	// Index needs crawlstate.PageDetails and Alerts crawlstate.AlertOutbox.
	// A State that is a crawlstate.Sharer (crawlstate/postgres) is shared:
	// engines that run one source at once split its due rows between them
	// (see Engine.Run).
	State crawlstate.State

	// Fetcher gets pages. Default: a fetch.HTTP using HTTPClient, Clock,
	// UserAgent, Logger and the Limits. A Fetcher that also implements
	// fetch.BatchFetcher gets the rows without validators in batch jobs
	// when more than BatchThreshold of them are due.
	Fetcher fetch.Fetcher
	// Remote, when set, is a paid back end (such as a *geonode.Client)
	// used through fetch.Hybrid: the engine asks the origin itself first,
	// through its polite fetcher, with the row's validators, and calls
	// Remote only when the page changed, the origin sends no validators, or
	// it blocks direct requests. Set Fetcher instead to use a back end for
	// every page. Fetcher and Remote exclude each other.
	Remote fetch.Fetcher
	// HTTPClient is the base client for robots.txt, discovery documents
	// and the default fetcher (default: a client on http.DefaultTransport,
	// or a copy keeping Limits.HostConcurrency idle connections per host
	// when that is more than it keeps). The engine wraps its transport with
	// its politeness policy, and its CheckRedirect with fetch.StayOnSite
	// unless FollowOffHostRedirects.
	HTTPClient *http.Client
	// FollowOffHostRedirects follows redirects to other hosts. By default
	// every redirect must stay on the requested URL's site (its host or
	// www/apex twin, normalize.SameSite): a page that redirects elsewhere
	// is skipped as SkipOffHostRedirect and nothing is stored under it; a
	// discovery document (sitemap, child sitemap, llms.txt, the entry
	// page) that does is not read; a crawl stays on its entry URL's host.
	FollowOffHostRedirects bool
	// UserAgent is sent with every request the engine makes, and matched
	// against robots.txt groups by its product token (the part before "/").
	UserAgent string
	// BatchThreshold is how many rows without validators must be due
	// before they go to a fetch.BatchFetcher (default 50).
	BatchThreshold int

	// Limits are the instance-wide caps (default DefaultLimits(); read
	// them from the environment with LimitsFromEnv).
	Limits *Limits

	// Scheduler chooses revisit intervals. The default (nil) is
	// schedule.Index{}: each run fetches the due pages of highest
	// Cho–Garcia-Molina index up to what the Halving baseline would fetch
	// of the same pages at the source's measured cadence (from the run
	// starts recorded in State), plus the pages past its 30-day floor; in
	// the simulator (schedule/sim) it is fresher at every cadence. A
	// scheduler that implements schedule.Planner is planned at the start
	// of every run; any other is used as it is.
	Scheduler schedule.Scheduler
	// Jitter spreads revisits: a row's next check comes up to this fraction
	// of its interval early, by an amount fixed per URL and visit, so pages
	// found together do not stay due together forever (default 0.1; set a
	// negative value for none).
	Jitter float64
	// Budget caps the fetches of one run (0: no cap). When more rows are
	// due than the budget allows, the due queue is ordered by the
	// scheduler's run plan (schedule.RunPlan.Priority) or, for a scheduler
	// that does not plan, by expected freshness gain (schedule.Gain)
	// instead of by due time, so the budget is spent where it buys most;
	// the rest stays due.
	Budget int
	// Weight gives a page's importance in the scheduler's freshness
	// objective, by its normalized URL (nil: every page weighs 1; a value
	// that is not a positive finite number also counts as 1). The default
	// scheduler ranks pages by weight × the freshness a fetch buys, so a
	// page of weight 2 is worth two of weight 1. It is called when a run
	// is planned and when a page is rescheduled, and must be safe for
	// concurrent use.
	Weight func(url string) float64
	// SitemapPriority, when Weight is nil, makes a sitemap's <priority>
	// a page's weight: priority / 0.5, so that the protocol's default of
	// 0.5 weighs 1 and 1.0 weighs 2 (0 counts as 0.01). A page listed
	// without a priority, or not read this run (a 304 sitemap), keeps the
	// weight of its last fetch (1 at first). The run's listed priorities
	// are held in memory until the run ends.
	SitemapPriority bool

	// Cluster names the co-change cluster of a page: pages that change
	// together, as a documentation section does when a release rewrites
	// it. The default scheduler learns from the pages' joint history how
	// much a change found on one page of a cluster says of the others,
	// and fetches them sooner (schedule.CoChange). Nil is
	// schedule.ClusterOf, the URL's directory; a page Cluster puts in ""
	// is in none, so a Cluster that returns "" for every URL turns
	// co-change off.
	Cluster func(url string) string

	// Normalize is the URL policy that gives pages their identity.
	Normalize normalize.Policy
	// Fingerprint strips volatile blocks before hashing: Base rules for
	// every host (default fingerprint.Default) plus per-host extras.
	Fingerprint fingerprint.Set
	// SitemapTrust says how far sitemap lastmods are believed (default
	// TrustLearned).
	SitemapTrust SitemapTrust
	// CanonicalPolicy says what a declared rel=canonical means (default
	// CanonicalRecord).
	CanonicalPolicy CanonicalPolicy

	// Embedder and Index, when both set, send every new or changed page
	// through the pipeline: chunk, embed (reusing the vectors of unchanged
	// chunk text), upsert records with provenance, delete the previous
	// version's records, and only then commit the new content hash.
	//
	// The engine needs only an index.Writer. It uses two further abilities
	// when the value has them: listing a page's records (index.Lister, or
	// else a Query method as index.Index has), to find and delete records
	// of versions a crash left written but never committed; and
	// DeleteWhere, to remove every record of a page that disappeared.
	// Without a way to list, such uncommitted records stay in the index;
	// without DeleteWhere a removed page's records are found by listing.
	Embedder embed.Embedder
	Index    index.Writer
	// Chunking configures the chunker (default chunk.Options{}).
	Chunking chunk.Options
	// Alerts, when set, receives a page-change alert for every committed
	// change and removal, exactly once per (URL, old hash, new hash).
	Alerts alert.Sink
	// AlertOnNew also alerts first sightings of pages (default false, so a
	// first run over a site does not flood).
	AlertOnNew bool
	// StageAttempts bounds the attempts of the embed, index and alert
	// stages of one page in one run (default 3); transient errors are
	// retried with backoff, without refetching the page.
	StageAttempts int
	// DeadLetterAfter is how many consecutive failed runs make a page a
	// dead letter (default 3); see Engine.DeadLetters.
	DeadLetterAfter int

	// Workers bounds concurrent page fetches (default 4). Answers with a
	// body are extracted (and indexed) by GOMAXPROCS goroutines of their
	// own, so a fetch worker goes on fetching while they work; requests to
	// one host are further bounded by Limits.HostConcurrency.
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
	// OnContent, when set, is a pipeline stage ("content") that hands a
	// page's readable content to the host before the outcome is committed:
	// new and changed pages, unchanged pages that answered with a body, and
	// gone pages (without content). An error is retried up to
	// StageAttempts times, then fails the page at that stage: the row keeps
	// its old hash and stays due, so the next run calls OnContent again. It
	// is called concurrently, by the extraction goroutines (GOMAXPROCS)
	// and, for gone pages, the fetch workers.
	OnContent func(ctx context.Context, c Content) error
}

// Content is a page's readable content as the engine stored it.
type Content struct {
	Source      string
	URL         string // the canonical URL: the page's identity
	OriginalURL string // as discovered
	FinalURL    string // after redirects ("" for gone pages)
	Outcome     Outcome
	Title       string
	Canonical   string // the rel=canonical the page declared
	ContentType string // of the response
	// Markdown is exactly what was fingerprinted, chunked and indexed
	// (chunk byte ranges index into it); "" for a gone page.
	Markdown string
	OldHash  string    // the stored content hash before this fetch
	Hash     string    // the new content hash ("" for a gone page)
	At       time.Time // when the page was fetched
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

// Error describes the failure.
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

// validate checks c without changing it; it returns a *ConfigError
// naming every invalid field.
func (c *Config) validate() error {
	var ce ConfigError
	if c.State == nil {
		ce.add("State", "required: open one with crawlstate/sqlite.Open")
	} else {
		if _, ok := c.State.(crawlstate.PageDetails); !ok && c.Index != nil {
			ce.add("State", "%T has no crawlstate.PageDetails, which a pipeline (Index) needs to tell which chunks changed", c.State)
		}
		if _, ok := c.State.(crawlstate.AlertOutbox); !ok && c.Alerts != nil {
			ce.add("State", "%T has no crawlstate.AlertOutbox, which Alerts need to deliver each alert exactly once", c.State)
		}
	}
	nonNegative := func(field string, v, def int) {
		if v < 0 {
			ce.add(field, "must be >= 0 (0 means %d), got %d", def, v)
		}
	}
	nonNegative("Workers", c.Workers, DefaultWorkers)
	nonNegative("MissingRuns", c.MissingRuns, DefaultMissingRuns)
	nonNegative("BatchSize", c.BatchSize, DefaultBatchSize)
	nonNegative("BatchThreshold", c.BatchThreshold, DefaultBatchThreshold)
	nonNegative("StageAttempts", c.StageAttempts, DefaultStageAttempts)
	nonNegative("DeadLetterAfter", c.DeadLetterAfter, DefaultDeadLetterAfter)
	if c.Budget < 0 {
		ce.add("Budget", "must be >= 0 (0 means no cap), got %d", c.Budget)
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
		if c.Limits.BlockPrivate && c.HTTPClient != nil && c.HTTPClient.Transport != nil {
			if _, ok := c.HTTPClient.Transport.(*http.Transport); !ok {
				ce.add("Limits", "BlockPrivate needs HTTPClient's transport to be an *http.Transport, whose dialer it guards; got %T", c.HTTPClient.Transport)
			} else if _, err := (&fetch.Guard{}).Transport(c.HTTPClient.Transport.(*http.Transport)); err != nil {
				ce.add("Limits", "BlockPrivate: %v", err)
			}
		}
	}
	if strings.ContainsAny(c.UserAgent, "\r\n") {
		ce.add("UserAgent", "must be one line")
	}
	if c.Fetcher != nil && c.Remote != nil {
		ce.add("Remote", "Fetcher and Remote exclude each other: Remote is used behind the engine's own direct fetcher")
	}
	if (c.Embedder == nil) != (c.Index == nil) {
		ce.add("Embedder", "Embedder and Index go together: set both to index pages, or neither")
	}
	if c.Embedder != nil && c.Embedder.Dimensions() <= 0 {
		ce.add("Embedder", "reports %d dimensions", c.Embedder.Dimensions())
	}
	if c.SitemapTrust != TrustLearned && c.SitemapTrust != TrustHint && c.SitemapTrust != TrustAuthoritative {
		ce.add("SitemapTrust", "unknown value %d", c.SitemapTrust)
	}
	if c.CanonicalPolicy != CanonicalRecord && c.CanonicalPolicy != CanonicalFollow {
		ce.add("CanonicalPolicy", "unknown value %d", c.CanonicalPolicy)
	}
	if len(ce.Problems) > 0 {
		return &ce
	}
	return nil
}

// withDefaults returns a copy of a valid c with every zero field that has a
// default set to it, and its own copy of Limits, which the engine keeps.
func (c Config) withDefaults() Config {
	def := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	def(&c.Workers, DefaultWorkers)
	def(&c.MissingRuns, DefaultMissingRuns)
	def(&c.BatchSize, DefaultBatchSize)
	def(&c.BatchThreshold, DefaultBatchThreshold)
	def(&c.StageAttempts, DefaultStageAttempts)
	def(&c.DeadLetterAfter, DefaultDeadLetterAfter)
	if c.LockTTL == 0 {
		c.LockTTL = DefaultLockTTL
	}
	switch {
	case c.Jitter == 0:
		c.Jitter = DefaultJitter
	case c.Jitter < 0:
		c.Jitter = 0
	}
	if c.Limits == nil {
		l := DefaultLimits()
		c.Limits = &l
	} else {
		l := *c.Limits // the engine keeps its own copy
		c.Limits = &l
	}
	if c.UserAgent == "" {
		c.UserAgent = fetch.DefaultUserAgent
	}
	if c.Clock == nil {
		c.Clock = clock.Real()
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.HTTPClient == nil {
		c.HTTPClient = &http.Client{}
	}
	return c
}
