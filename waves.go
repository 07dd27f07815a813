package recrawl

import (
	"context"
	"fmt"
	"hash/fnv"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/schedule"
)

// A run with a limit (the plan's, or Config.Budget) picks its rows in
// waves. The first walks the due queue: rows never fetched, owed a retry,
// or whose sitemap lastmod moved in a listing that the evidence does not
// call a liar are dispatched outside the limit; a listing without enough
// evidence has a sample of its moved rows dispatched first, the rest
// waiting for a later wave; the other rows are ranked by the plan, with
// the co-change chance of what their siblings showed, beside the siblings
// planning found exposed. When the source's pages change together (its
// co-change model has learned a lift), the run spreads its limit over
// coWaves waves: each but the last spends firstWave of what is left, and
// each after the first walks the due queue again, with the verdicts the
// earlier samples settled and the chances the earlier waves' changes
// raised, and reads the siblings of the clusters where the run found
// changes so far. A release found in one wave is followed within the
// run. Otherwise a second wave takes what the first deferred.

// coWaves is how many waves a run whose source learned co-change spreads
// its limit over; firstWave is the share of what is left of the limit
// each wave but the last spends.
const (
	coWaves   = 4
	firstWave = 0.5
)

// wave is one pass of a run's selection.
type wave struct {
	limit  int // rows ranked by the plan this wave may dispatch
	rank   func(schedule.Page) float64
	capped bool // Config.Budget is the limit: every row competes in it
	last   bool // rows left out are skipped, not left to a later wave
	first  bool // the first wave: its due walk counts Report.Due
	extra  []crawlstate.Row
	// deferred counts the rows the wave left to a later one; used, the
	// limit it spent (the ranked rows it dispatched, and the moved rows
	// the budget counts).
	deferred, used int
}

// fetchDue works through the due queue of a run that has the source to
// itself: the waves pick the rows (every due row, or the ranked ones a
// limit allows), route hands each to the fetch stages, and rows without
// validators go to a fetch.BatchFetcher in batch jobs when more than
// BatchThreshold of them are due (fetchPlain). Each wave's fetches are
// recorded before the next wave is picked.
func (r *run) fetchDue(ctx context.Context) error {
	return (&selector{r: r}).fetchDue(ctx)
}

// selector picks a run's rows, wave after wave. It is used by one
// goroutine, the one that picks.
type selector struct {
	r      *run
	picked map[string]bool // the URLs a wave picked, for a later wave to pass by
	// hot holds the clusters where the run found changes so far whose
	// siblings may still be worth a look.
	hot map[string]bool
}

func (sl *selector) fetchDue(ctx context.Context) error {
	r := sl.r
	// Report.Due is counted by the first wave's due walk (eachDue), not
	// by a count query: every due row is dispatched or skipped with its
	// own event, so the walk sees each of them once.
	limit, rank, capped := r.runLimit()
	r.tally.add(func(rep *Report) { rep.Limit = limit })
	w := &wave{limit: limit, rank: rank, capped: capped, first: true, last: limit < 0, extra: r.exposed}
	split := limit >= 0 && r.co.Learned()
	waves := 2 // the second takes what the first deferred
	if split {
		waves = coWaves
		w.limit = int(math.Ceil(firstWave * float64(limit)))
	}
	if err := sl.fetchWave(ctx, w); err != nil || limit < 0 {
		return err
	}
	if w.deferred == 0 && !split {
		return nil
	}
	left := max(limit-w.used, 0)
	for i := 1; i < waves; i++ {
		next := &wave{limit: left, rank: rank, capped: capped, last: i == waves-1}
		if !next.last {
			next.limit = int(math.Ceil(firstWave * float64(left)))
		}
		if r.halt.halted() {
			next.limit = 0
		}
		var err error
		if next.extra, err = sl.siblings(ctx); err != nil {
			return err
		}
		if err := sl.fetchWave(ctx, next); err != nil {
			return err
		}
		left = max(left-next.used, 0)
	}
	return nil
}

// fetchWave picks w's rows and fetches them through a run of the stages.
func (sl *selector) fetchWave(ctx context.Context, w *wave) error {
	r := sl.r
	// The co-change model learns the wave's fetches once the wave is
	// done, so that ranking does not depend on the order they finish in.
	r.co.Hold()
	defer r.co.Release()
	r.tally.add(func(rep *Report) { rep.Waves++ })
	s := r.startStages(ctx)
	var plain []crawlstate.Row
	qerr := sl.selectWave(ctx, w, func(row *crawlstate.Row) bool { return r.route(ctx, s, row, &plain) })
	r.fetchPlain(ctx, s, plain, qerr == nil)
	s.wait()
	if err := ctx.Err(); err != nil {
		return err
	}
	return qerr
}

// selectDue is a single wave's selection, for a leading shared run's
// offer: what fetchDue's waves would fetch, without a second wave (the
// rows of a listing's sample are offered, the rest of its moved rows
// ranked).
func (r *run) selectDue(ctx context.Context, dispatch func(*crawlstate.Row) bool) error {
	limit, rank, capped := r.runLimit()
	r.tally.add(func(rep *Report) { rep.Limit, rep.Waves = limit, 1 })
	return (&selector{r: r}).selectWave(ctx, &wave{limit: limit, rank: rank, capped: capped, first: true, last: true}, dispatch)
}

// selectWave walks the due queue for w and hands dispatch the rows to
// fetch (see the comment at the top of this file). Without a limit it
// dispatches every row in (NextCheck, URL) order. Only w.limit ranked rows
// and each listing's sample are held in memory at a time.
func (sl *selector) selectWave(ctx context.Context, w *wave, dispatch func(*crawlstate.Row) bool) error {
	r := sl.r
	stop := false
	send := func(row *crawlstate.Row) bool {
		sl.markPicked(row.URL)
		if !dispatch(row) {
			stop = true
		}
		return !stop
	}
	walk := func(fn func(*crawlstate.Row) bool) error {
		if w.first {
			return r.eachDue(ctx, fn)
		}
		return r.e.walkDue(ctx, r.source, r.start, nil, func(row *crawlstate.Row) bool {
			if sl.picked[row.URL] {
				return true // the first wave's
			}
			return fn(row)
		})
	}
	if w.limit < 0 {
		return walk(send)
	}
	var best gainHeap
	room := w.limit // what the limit leaves for the ranked rows
	samples := map[*docTrust]*sampleSet{}
	var docs []*docTrust // samples' keys in the order met
	// A listing's verdict is taken once a wave, from the evidence at the
	// wave's start, whatever the fetches finishing meanwhile add to it.
	type judged struct {
		v     schedule.Verdict
		quota int
	}
	verdicts := map[*docTrust]judged{}
	leave := func(row crawlstate.Row) {
		if row.NextCheck.After(r.start) {
			return // a sibling that was not due: it stays as it is
		}
		if w.last {
			r.skipDue(row, SkipBudget)
		} else {
			w.deferred++
		}
	}
	consider := func(row *crawlstate.Row, g float64) {
		switch {
		case best.len() < room:
			best.push(row, g)
		case room > 0 && stronger(gainEntry{gain: g, url: row.URL}, best.entries[0]):
			leave(best.replaceWeakest(row, g)) // the weakest row kept so far
		default:
			leave(*row)
		}
	}
	var werr error
	err := walk(func(row *crawlstate.Row) bool {
		switch class, doc := sl.classify(ctx, row, &werr); {
		case werr != nil:
			return false
		case class == classRanked:
			consider(row, w.rank(r.ranked(*row)))
		case w.capped:
			// Config.Budget holds every row: the ones the run owes a
			// fetch come first within it.
			consider(row, math.Inf(1))
		case class == classSample:
			j, ok := verdicts[doc]
			if !ok {
				j.v, j.quota = r.trust.verdict(doc)
				verdicts[doc] = j
			}
			v, quota := j.v, j.quota
			switch {
			case v == schedule.Force:
				// The budget counts it, as the seeds' baseline fetches
				// every moved row; it is fetched even when it leaves no
				// room.
				room = max(room-1, 0)
				return send(row)
			case v == schedule.Rank:
				consider(row, w.rank(r.ranked(*row)))
				return true
			}
			set := samples[doc]
			if set == nil {
				set = &sampleSet{quota: quota}
				samples[doc] = set
				docs = append(docs, doc)
			}
			if out, ok := set.offer(row); ok {
				if w.last {
					consider(&out, w.rank(r.ranked(out)))
				} else {
					w.deferred++
				}
			}
		case class == classTakesRoom:
			// Made due by discovery under a fixed trust: it takes the
			// place of a ranked row (the due queue lists these rows first).
			room = max(room-1, 0)
			return send(row)
		default:
			return send(row)
		}
		return true
	})
	if werr != nil {
		return werr
	}
	if err != nil || stop || ctx.Err() != nil {
		return err
	}
	for _, doc := range docs {
		set := samples[doc]
		for i := range set.rows {
			r.trust.sampledOne(doc)
			room = max(room-1, 0)
			if !send(&set.rows[i].row) {
				return nil
			}
		}
	}
	for best.len() > room {
		// The rows the limit held before moved rows took its room.
		leave(*best.pop())
	}
	for i := range w.extra {
		if row := &w.extra[i]; !sl.picked[row.URL] {
			consider(row, w.rank(r.ranked(*row)))
		}
	}
	picked := make([]*crawlstate.Row, best.len())
	for i := len(picked) - 1; i >= 0; i-- {
		picked[i] = best.pop()
	}
	w.used = w.limit - room + len(picked)
	for _, row := range picked {
		if row.NextCheck.After(r.start) {
			// A sibling the co-change model made worth a look: due now.
			r.tally.add(func(rep *Report) { rep.Due++ })
		}
		if !send(row) {
			return nil
		}
	}
	// The rows the limit left out stay due; the dispatched ones finish.
	r.tally.add(func(rep *Report) {
		if rep.StoppedBy == "" && w.capped && rep.Skipped[SkipBudget] > 0 {
			rep.StoppedBy = StopBudget
		}
	})
	return nil
}

// The classes of a due row in a wave.
const (
	classRanked    = iota // ranked by the plan
	classOwed             // never fetched or owed a retry: fetched outside the limit
	classSample           // its lastmod moved, under learned trust: its listing's verdict decides
	classTakesRoom        // made due by discovery under a fixed trust: first, in a ranked row's place
)

// classify is the class of a due row, and for classSample its listing's
// trust (read from the state the first time; an error is set in *err).
func (sl *selector) classify(ctx context.Context, row *crawlstate.Row, err *error) (int, *docTrust) {
	r := sl.r
	switch {
	case row.ContentHash == "" || row.Failures > 0:
		return classOwed, nil
	case r.trust.learned:
		if !r.trust.moved(*row) {
			return classRanked, nil
		}
		d, derr := r.trust.document(ctx, row.ListedIn)
		if derr != nil {
			*err = derr
		}
		return classSample, d
	case row.NextCheck.IsZero():
		return classTakesRoom, nil
	}
	return classRanked, nil
}

// sampleSet holds a listing's sample of moved rows for a wave: the quota
// rows of smallest hash of their URL, an even sample whatever the order
// of the due queue.
type sampleSet struct {
	quota int
	rows  []sampled
}

type sampled struct {
	hash uint64
	row  crawlstate.Row
}

// offer adds row to the sample; ok reports that a row (row itself, or one
// it displaced) is left out, returned as out.
func (s *sampleSet) offer(row *crawlstate.Row) (out crawlstate.Row, ok bool) {
	h := sampleHash(row.URL)
	if len(s.rows) < s.quota {
		s.rows = append(s.rows, sampled{h, *row})
		return crawlstate.Row{}, false
	}
	worst := -1
	for i, c := range s.rows {
		if c.hash > h && (worst < 0 || c.hash > s.rows[worst].hash) {
			worst = i
		}
	}
	if worst < 0 {
		return *row, true
	}
	out = s.rows[worst].row
	s.rows[worst] = sampled{h, *row}
	return out, true
}

// sampleHash is FNV-1a of url: a fixed order, so that a run picks the
// same sample whatever the order it reads the rows in.
func sampleHash(url string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(url))
	return h.Sum64()
}

// markPicked notes that a wave handed url on (or skipped it), so a later
// wave's due walk passes it by.
func (sl *selector) markPicked(url string) {
	if sl.picked == nil {
		sl.picked = map[string]bool{}
	}
	sl.picked[url] = true
}

// siblingRows bounds the rows a wave reads to find the siblings of the
// clusters where the run found changes.
const siblingRows = 20_000

// siblings returns the rows not due and not picked yet of the clusters
// where the run found changes so far whose co-change chance is positive
// and worth a look (schedule.IndexPlan.Worth), read through
// crawlstate.LiveLister (none without it, or with Config.Cluster), at most
// siblingRows rows read in all. A cluster none of whose rows is left
// worth a look is forgotten.
func (sl *selector) siblings(ctx context.Context) ([]crawlstate.Row, error) {
	r := sl.r
	ll, ok := r.e.st.State.(crawlstate.LiveLister)
	if !ok || r.co == nil || r.e.cfg.Cluster != nil {
		return nil, nil // a cluster of Config.Cluster's need not be a range of URLs
	}
	worth, _ := r.sched.(interface{ Worth(schedule.Page) bool })
	if sl.hot == nil {
		sl.hot = map[string]bool{}
	}
	for _, key := range r.co.Touched() {
		sl.hot[key] = true
	}
	var out []crawlstate.Row
	read := 0
	for _, key := range slices.Sorted(maps.Keys(sl.hot)) {
		found := len(out)
		after := clusterStart(key)
		for read < siblingRows {
			rows, err := ll.LiveRows(ctx, r.source, after, min(r.e.cfg.BatchSize, siblingRows-read))
			if err != nil {
				return nil, fmt.Errorf("recrawl: reading the siblings in %s: %w", key, err)
			}
			read += len(rows)
			done := len(rows) == 0
			for _, row := range rows {
				if !strings.HasPrefix(row.URL, key) {
					done = true
					break
				}
				if schedule.ClusterOf(row.URL) != key || row.Excluded != "" || !row.NextCheck.After(r.start) || sl.picked[row.URL] {
					continue
				}
				p := r.ranked(row)
				if p.CoChange > 0 && (worth == nil || worth.Worth(p)) {
					out = append(out, row)
				}
			}
			if done || len(rows) < r.e.cfg.BatchSize {
				break
			}
			after = rows[len(rows)-1].URL
		}
		if len(out) == found && read < siblingRows {
			delete(sl.hot, key) // read whole: nothing left worth a look
		}
	}
	return out, nil
}

// clusterStart is the URL after which a listing in URL order reaches the
// first URL of cluster key (a directory, ending in a slash): key with its
// slash lowered by one and the highest byte after it, so that no URL
// between the two carries the prefix.
func clusterStart(key string) string {
	if key == "" {
		return ""
	}
	return key[:len(key)-1] + string(key[len(key)-1]-1) + "\xff"
}
