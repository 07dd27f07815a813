package recrawl

import (
	"time"
)

// Outcome is how one accepted URL ended a run. Every URL the run touched
// ends in exactly one outcome.
type Outcome string

// The outcomes of a URL in a run.
const (
	// OutcomeNew: first content stored for the page.
	OutcomeNew Outcome = "new"
	// OutcomeChanged: the content changed since the stored copy.
	OutcomeChanged Outcome = "changed"
	// OutcomeUnchanged: a 304, or a body whose fingerprint equals the
	// stored one.
	OutcomeUnchanged Outcome = "unchanged"
	// OutcomeGone: the origin answered 404 or 410; the row is a tombstone.
	OutcomeGone Outcome = "gone"
	// OutcomeSkipped: the URL was not requested (robots, a cap, off-host,
	// invalid); Event.Reason says why.
	OutcomeSkipped Outcome = "skipped"
	// OutcomeFailed: a stage failed (Event.Stage); the row keeps its
	// content and validators and is due again after its backoff.
	OutcomeFailed Outcome = "failed"
)

// Stages of the per-page pipeline, as named in failures and stage counts.
const (
	StageFetch   = "fetch"
	StageExtract = "extract"
	StageCommit  = "commit"
)

// Reasons a URL is skipped, as counted in Report.Skipped and named by
// Event.Reason. Each skipped URL produces one Observer event. The reasons
// at discovery (the URL never becomes a row) are SkipInvalid, SkipTooLong
// and SkipOffHost; a crawl's SkipDuplicate, and SkipShutdown, SkipMaxPages
// and SkipError for links a stopped crawl did not follow, are discovery
// skips too. The others are due rows the run did not request (or whose
// content it did not use); those rows stay due, unchanged.
const (
	SkipInvalid   = "invalid"   // discovery listed a URL that does not parse or normalize (a sitemap <loc>, a crawl link)
	SkipTooLong   = "too_long"  // a sitemap <loc> longer than the parser's limit (8 KiB)
	SkipOffHost   = "off-host"  // a sitemap listed a URL, or a child sitemap, of another host
	SkipRobots    = "robots"    // robots.txt disallows the URL; it was not requested
	SkipMaxPages  = "max_pages" // the page cap ended the run first; the row stays due
	SkipBudget    = "budget"    // Config.Budget or the run plan's limit was spent on pages ranked higher; the row stays due
	SkipAlias     = "alias"     // CanonicalFollow: the page declares another canonical
	SkipDuplicate = "duplicate" // a crawl reached a URL already handled in this run
	SkipShutdown  = "shutdown"  // Engine.Shutdown stopped the run first; the row stays due
	SkipError     = "error"     // a fatal fetcher error stopped the run first; the row stays due
	// SkipNotDocument: the URL answered with something that is not a page
	// (an image, an archive, a notebook, a feed: anything but HTML, and
	// for a sitemap or llms.txt source Markdown or plain text); the row
	// is excluded from the due queue and not requested again unless a
	// sitemap moves its lastmod.
	SkipNotDocument = "not_document"
	// SkipOffHostRedirect: the URL redirects to another host (see
	// Config.FollowOffHostRedirects); the redirect was not followed and
	// nothing was stored under the URL, whose row stays as it was.
	SkipOffHostRedirect = "offhost_redirect"
	// SkipLeaseLost: a row of a shared run whose lease this engine lost
	// (it was paused, or its State unreachable, past Config.LockTTL) and
	// another engine took over. It was not requested, or, when the answer
	// came after the loss, neither indexed nor recorded by this engine:
	// the engine that holds it records it.
	SkipLeaseLost = "lease_lost"
)

// Reasons named by Report.StoppedBy.
const (
	StopMaxPages = "max_pages" // WEB_MAX_PAGES
	StopMaxDepth = "max_depth" // WEB_MAX_DEPTH
	StopBudget   = "budget"    // Config.Budget
	StopError    = "error"     // a fatal fetcher error; Run returned it
	StopShutdown = "shutdown"  // Engine.Shutdown
)

// Event is one URL outcome, delivered to Config.Observer as it happens.
type Event struct {
	Source  string
	URL     string // normalized URL ("" for a discovery URL that did not normalize)
	Outcome Outcome
	Stage   string // the failed stage, for OutcomeFailed
	Reason  string // the skip reason, for OutcomeSkipped
	Status  int    // the origin's HTTP status, when there was one
	Err     error  // the failure, for OutcomeFailed
	At      time.Time
	// Done counts due URLs finished so far in this run, of Due: the due
	// URLs the run has read from the due queue so far (it grows a page of
	// Config.BatchSize rows at a time and ends at Report.Due).
	Done, Due int
}

// StageCount counts the attempts of one pipeline stage in a run.
type StageCount struct {
	Attempts  int `json:"attempts"`
	Successes int `json:"successes"`
	Failures  int `json:"failures"`
}

// Report summarizes one run. It marshals to JSON with stable snake_case
// names. The counts reconcile: Discovered = Accepted + Duplicates +
// skipped-at-discovery; every due URL ends in exactly one of New, Changed,
// Unchanged, Gone, Failed or Skipped.
type Report struct {
	Source     string    `json:"source"`
	StartedAt  time.Time `json:"started_at"`
	FinishedAt time.Time `json:"finished_at"`

	// Discovery.
	Discovered int  `json:"discovered"` // links the source listed
	Duplicates int  `json:"duplicates"` // listed again after normalization
	Accepted   int  `json:"accepted"`   // unique normalized URLs stored
	NewURLs    int  `json:"new_urls"`   // of those, never seen before
	Revived    int  `json:"revived"`    // gone rows listed again
	Bumped     int  `json:"bumped"`     // rows made due by a moved lastmod
	Missing    int  `json:"missing"`    // known rows the listing lacked
	Unlisted   int  `json:"unlisted"`   // rows of unchanged (304) discovery documents, kept as seen
	Incomplete bool `json:"incomplete"` // the listing was partial: nothing was counted missing

	// The due queue.
	//
	// Due is the rows due at the start of the run (a cancelled run: those
	// it reached). In a run of a shared State (crawlstate.Sharer) it is
	// the rows this run claimed, and, when it led the run, the due rows it
	// left out of the offer (a budget).
	Due int `json:"due"`
	// Offered is how many due rows this run offered to the engines of a
	// shared run it led, itself included; each is counted in the Due of
	// the engine that claimed it.
	Offered int `json:"offered,omitempty"`
	// Joined reports that this run joined a shared run another engine
	// led: it did not discover the source, and fetched its share of the
	// rows that run offered.
	Joined      bool `json:"joined,omitempty"`
	Fetched     int  `json:"fetched"`      // rows requested from the origin
	Bodies      int  `json:"bodies"`       // answers with a body (2xx)
	NotModified int  `json:"not_modified"` // 304 answers (counted in Unchanged)

	// Outcomes.
	New       int            `json:"new"`
	Changed   int            `json:"changed"`
	Unchanged int            `json:"unchanged"`
	Gone      int            `json:"gone"`
	Failed    map[string]int `json:"failed"`  // by stage
	Skipped   map[string]int `json:"skipped"` // by reason

	// Stages counts attempts, successes and failures per stage.
	Stages map[string]StageCount `json:"stages"`

	// Aliases counts pages recorded as aliases of their declared canonical
	// (CanonicalFollow).
	Aliases int `json:"aliases"`
	// VectorsReused and VectorsEmbedded count chunk vectors taken from the
	// cache (unchanged text) and computed by the embedder.
	VectorsReused   int `json:"vectors_reused"`
	VectorsEmbedded int `json:"vectors_embedded"`
	// AlertsDelivered counts alerts the sink acknowledged in this run
	// (redeliveries included); AlertsPending those it did not.
	AlertsDelivered int `json:"alerts_delivered"`
	AlertsPending   int `json:"alerts_pending"`
	// Billed counts requests a paid fetch back end charged.
	Billed int `json:"billed"`
	// RetriesDeferred counts the pages that failed in this run and were
	// backed off: none is due again before its backoff ends (an hour,
	// doubling per consecutive failure; the longest interval for a
	// permanent failure), so no run refetches a failing page every time.
	RetriesDeferred int `json:"retries_deferred"`

	// Requests is how many page requests the run sent (retries and
	// redirect hops included; robots.txt and discovery documents not): what
	// the site received for its pages. A request whose connection was
	// refused at dial time (Limits.BlockPrivate, a host that is down) never
	// reached the site and is not counted. Requests a Fetcher sends around the
	// engine's transport (a remote API) count as the attempts it reports.
	Requests int `json:"requests"`
	// FullRecrawlRequests is what a full recrawl would have sent: one
	// request per live page of the source.
	FullRecrawlRequests int `json:"full_recrawl_requests"`

	// Scheduler names the policy that scheduled this run's revisits
	// ("optimal", "halving", or the type of a custom Scheduler).
	Scheduler string `json:"scheduler"`
	// StateWriteFailures counts the state writes that failed while the run
	// went on without them, by kind.
	StateWriteFailures StateWriteFailures `json:"state_write_failures"`

	// Limit is how many due rows the run's plan (or Config.Budget) let it
	// rank and fetch; the rows it owed a fetch come on top (never fetched,
	// owed a retry) or are counted in it without ever being starved (a
	// moved sitemap lastmod that its listing's evidence believes, and a
	// listing's sample). -1: nothing limited the run (every due row was
	// fetched).
	Limit int `json:"limit"`
	// Waves is how many passes the run's selection made over its due rows:
	// one without a limit, two when the first left rows to a second (a
	// listing's sample settled first), and up to four when the source's
	// pages change together, each pass after the first ranking again with
	// the changes the earlier ones found, so that a release found in one
	// is followed within the run. It is 0 for a run that walked no due
	// queue of its own: one that joined another engine's run, or one
	// under authoritative sitemap trust whose sitemap did not change.
	Waves int `json:"waves"`

	// StoppedBy names the cap that ended the run early, if any.
	StoppedBy string `json:"stopped_by,omitempty"`
}

// StateWriteFailures counts, by kind, the writes to the state that failed
// while a run went on without them; each is also logged.
type StateWriteFailures struct {
	// Events: a page's stage events (Explain lacks them).
	Events int `json:"events"`
	// Failures: a failed page's record and backoff (the row keeps its
	// next check and is retried at the next run).
	Failures int `json:"failures"`
	// Leases: extending a shared run's leases of the rows it claimed
	// (another engine may take and fetch them when they expire).
	Leases int `json:"leases"`
	// Lock: refreshing the run lock, a passing error (a lost lock stops
	// the run instead).
	Lock int `json:"lock"`
	// Releases: releasing the run lock or claimed rows, or withdrawing
	// rows from a shared run (they return when their lease expires).
	Releases int `json:"releases"`
	// Alerts: recording an alert's delivery or failure (it stays pending
	// and may be delivered again, under its ID).
	Alerts int `json:"alerts"`
	// Vectors: caching chunk vectors (they are embedded again next time).
	Vectors int `json:"vectors"`
}

// Total is the number of failed writes of every kind.
func (s StateWriteFailures) Total() int {
	return s.Events + s.Failures + s.Leases + s.Lock + s.Releases + s.Alerts + s.Vectors
}

// FailedTotal returns the number of URLs that failed at any stage.
func (r *Report) FailedTotal() int { return sum(r.Failed) }

// SkippedTotal returns the number of URLs skipped for any reason.
func (r *Report) SkippedTotal() int { return sum(r.Skipped) }

// Saving returns how many times fewer requests the run sent than a full
// recrawl (FullRecrawlRequests / Requests); 0 when nothing was known.
func (r *Report) Saving() float64 {
	if r.FullRecrawlRequests == 0 {
		return 0
	}
	return float64(r.FullRecrawlRequests) / float64(max(r.Requests, 1))
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

func newReport(source string, start time.Time) *Report {
	return &Report{
		Source:    source,
		StartedAt: start,
		Failed:    map[string]int{},
		Skipped:   map[string]int{},
		Stages:    map[string]StageCount{},
		Limit:     -1,
	}
}
