package schedule_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/recrawl/recrawl/schedule"
)

func TestClusterOf(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"https://h/docs/guide/a", "https://h/docs/guide/"},
		{"https://h/docs/guide/a?x=/y", "https://h/docs/guide/"},
		{"https://h/docs/guide/#/frag", "https://h/docs/guide/"},
		{"/docs/s01/p1", "/docs/s01/"},
		{"page", ""},
		{"", ""},
	} {
		require.Equal(t, tc.want, schedule.ClusterOf(tc.in), tc.in)
	}
}

// coWorld feeds a model the fetches of a site of sections of 40 pages,
// each page fetched every day at a random hour: with releases, every few
// days one section's pages change together (half of them); without, each
// page changes alone at the same mean rate.
func coWorld(m *schedule.CoChange, releases bool, days int, seed uint64) map[string]schedule.Page {
	rng := rand.New(rand.NewPCG(seed, 1))
	const sections, per = 10, 40
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pages := map[string]schedule.Page{}
	changedSince := map[string]bool{}
	url := func(s, i int) string { return fmt.Sprintf("https://h/docs/s%02d/p%02d", s, i) }
	for s := range sections {
		for i := range per {
			pages[url(s, i)] = schedule.Page{LastFetched: start, ChangeRate: 0.05}
		}
	}
	for day := range days {
		now := start.Add(time.Duration(day) * schedule.Day)
		// Changes during the day.
		if releases {
			if day%2 == 0 {
				s := rng.IntN(sections)
				for i := range per {
					if rng.Float64() < 0.5 {
						changedSince[url(s, i)] = true
					}
				}
			}
		} else {
			for u := range pages {
				if rng.Float64() < 0.025 { // the releases' mean rate, a page at a time
					changedSince[u] = true
				}
			}
		}
		// Each page fetched once a day, at its own hour.
		for s := range sections {
			for i := range per {
				u := url(s, i)
				at := now.Add(time.Duration(1+(s*per+i)%23) * time.Hour)
				p := pages[u]
				obs := schedule.Observation{At: at, Changed: changedSince[u]}
				m.Check(u, p, obs)
				p = schedule.Observe(p, obs)
				pages[u] = p
				delete(changedSince, u)
			}
		}
	}
	return pages
}

// A site whose sections change together is learned as such: a page whose
// siblings were found changed since its last fetch gets a co-change
// chance; a site whose pages change alone is not, and gets none.
func TestCoChangeLearnsSections(t *testing.T) {
	m := schedule.NewCoChange(nil)
	coWorld(m, true, 60, 1)
	require.True(t, m.Learned(), "sections that release together")
	v := m.Value("https://h/docs/s00/x")
	require.Zero(t, v[0][1], "no excess, no chance")
	require.Greater(t, v[3][1], 0.2, "a large excess: a release touched about half of the section")

	alone := schedule.NewCoChange(nil)
	pages := coWorld(alone, false, 60, 1)
	require.False(t, alone.Learned(), "pages that change alone")
	for u, p := range pages {
		require.Zero(t, alone.Chance(u, p, p.LastFetched.Add(schedule.Day)), u)
	}
}

// After a release is found on some pages of a section, their siblings not
// fetched since have a chance; the pages of other sections, and siblings
// fetched after the changes were found, have none.
func TestCoChangeChanceAfterRelease(t *testing.T) {
	m := schedule.NewCoChange(nil)
	coWorld(m, true, 60, 2)
	require.True(t, m.Learned())
	m.Touched()
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	before := schedule.Page{LastFetched: t0, ChangeRate: 0.05}
	for i := range 6 { // six siblings fetched an hour later found changed
		u := fmt.Sprintf("https://h/docs/s03/found%d", i)
		m.Check(u, schedule.Page{LastFetched: t0.Add(-time.Hour), ChangeRate: 0.05}, schedule.Observation{At: t0.Add(time.Hour), Changed: true})
	}
	now := t0.Add(2 * time.Hour)
	require.Greater(t, m.Chance("https://h/docs/s03/other", before, now), 0.1)
	require.Zero(t, m.Chance("https://h/docs/s04/other", before, now), "another section")
	require.Zero(t, m.Chance("https://h/docs/s03/other", schedule.Page{LastFetched: now, ChangeRate: 0.05}, now.Add(time.Hour)), "fetched since")
	require.Zero(t, m.Chance("https://h/docs/s03/other", schedule.Page{}, now), "never fetched")
	require.Equal(t, []string{"https://h/docs/s03/"}, m.Touched())
	require.Empty(t, m.Touched(), "Touched forgets")

	// Learn reschedules a fetch at the chance the model gave it, and the
	// check it adds keeps that chance.
	spy := schedule.ReschedulerFunc(func(p schedule.Page, o schedule.Outcome) schedule.Decision {
		return schedule.Decision{Page: schedule.Observe(p, o.Observation), Next: o.At.Add(time.Hour)}
	})
	want := m.Attributable("https://h/docs/s03/other", before, now)
	require.Equal(t, m.Chance("https://h/docs/s03/other", before, now), want, "six changes: far beyond noise")
	d := schedule.Learn{Next: spy, Model: m}.Reschedule(before, schedule.Outcome{URL: "https://h/docs/s03/other", Kind: schedule.Fetched, Observation: schedule.Observation{At: now, Changed: true}})
	require.Len(t, d.Page.Recent, 1)
	require.Equal(t, want, d.Page.Recent[0].CoChance)
	require.Equal(t, want, d.Page.CoChange)
	d = schedule.Learn{Next: spy, Model: m}.Reschedule(before, schedule.Outcome{URL: "https://h/docs/s04/other", Kind: schedule.Fetched, Observation: schedule.Observation{At: now, Changed: true}})
	require.Zero(t, d.Page.Recent[0].CoChance, "another section")

	// One change found in a section is within noise of pages that change
	// alone: it raises the siblings' chance, and a change they are found
	// with is still read as their own.
	m.Check("https://h/docs/s05/found", schedule.Page{LastFetched: t0.Add(-time.Hour), ChangeRate: 0.05}, schedule.Observation{At: t0.Add(time.Hour), Changed: true})
	require.Positive(t, m.Chance("https://h/docs/s05/other", before, now))
	require.Zero(t, m.Attributable("https://h/docs/s05/other", before, now))
}

// Siblings checked clean since a page's last fetch (their checks found
// fewer changes than their rates predict) say its section had no release
// since: on a site whose sections release together, the page gets a
// discount on its own chance, learned from how rarely pages fetched in
// such clusters were found changed, and the index ranks it below a page
// of the same rate without one. A page whose siblings show a release gets
// none (and a co-change chance); on a site whose pages change alone no
// page gets one.
func TestCoChangeDiscountsCleanSections(t *testing.T) {
	m := schedule.NewCoChange(nil)
	coWorld(m, true, 60, 2)
	require.True(t, m.Learned())
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	siblings := func(section string, changed int) {
		for i := range 40 {
			u := fmt.Sprintf("https://h/docs/%s/seen%02d", section, i)
			m.Check(u, schedule.Page{LastFetched: t0.Add(-2 * schedule.Day), ChangeRate: 0.05}, schedule.Observation{At: t0.Add(time.Hour), Changed: i < changed})
		}
	}
	siblings("s07", 0)  // 3.8 changes predicted, none found: clean
	siblings("s08", 20) // a release
	siblings("s09", 4)  // about as many as predicted
	page := schedule.Page{LastFetched: t0, ChangeRate: 0.05}
	now := t0.Add(schedule.Day)
	d := m.Discount("https://h/docs/s07/other", page, now)
	t.Logf("discount after 40 clean checks: %.3f", d)
	require.Greater(t, d, 0.5, "a clean section's pages rarely changed")
	require.LessOrEqual(t, d, 1.0)
	require.Zero(t, m.Chance("https://h/docs/s07/other", page, now))
	require.Zero(t, m.Discount("https://h/docs/s08/other", page, now), "a release")
	require.Positive(t, m.Chance("https://h/docs/s08/other", page, now))
	require.Zero(t, m.Discount("https://h/docs/s09/other", page, now), "no deficit")
	require.Zero(t, m.Discount("https://h/docs/s07/other", schedule.Page{}, now), "never fetched")
	require.Zero(t, m.Discount("https://h/docs/s07/other", schedule.Page{LastFetched: now, ChangeRate: 0.05}, now.Add(time.Hour)), "fetched since")
	require.Zero(t, m.Discount("https://h/docs/s10/other", page, now), "a cluster never checked")

	plan := sixHourlyPlan(now, 0.05)
	discounted := page
	discounted.CoDiscount = d
	require.Less(t, plan.Priority(discounted), plan.Priority(page))
	discounted.CoDiscount = 1
	require.Zero(t, plan.Priority(discounted), "a page certain not to have changed is worth nothing")
	discounted.CoDiscount = math.NaN()
	require.Equal(t, plan.Priority(page), plan.Priority(discounted), "NaN says nothing")

	alone := schedule.NewCoChange(nil)
	pages := coWorld(alone, false, 60, 2)
	require.False(t, alone.Learned())
	for u, p := range pages {
		require.Zero(t, alone.Discount(u, p, p.LastFetched.Add(schedule.Day)), u)
	}
}

// A burst far beyond noise is read for the share of the section its
// release rewrote: siblings of a section where nine in ten of the pages
// fetched since were found changed get a higher chance than those of one
// where one in four were, although both bursts are at the highest level
// of excess.
func TestCoChangeReadsTheBurstShare(t *testing.T) {
	m := schedule.NewCoChange(nil)
	coWorld(m, true, 60, 2)
	require.True(t, m.Learned())
	t0 := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC)
	burst := func(section string, changed int) float64 {
		for i := range 20 {
			u := fmt.Sprintf("https://h/docs/%s/found%02d", section, i)
			m.Check(u, schedule.Page{LastFetched: t0.Add(-time.Hour), ChangeRate: 0.05}, schedule.Observation{At: t0.Add(time.Hour), Changed: i < changed})
		}
		// Fetched before the burst's checks began: surely exposed.
		return m.Chance("https://h/docs/"+section+"/other", schedule.Page{LastFetched: t0.Add(-2 * time.Hour), ChangeRate: 0.05}, t0.Add(2*time.Hour))
	}
	most, quarter := burst("s05", 18), burst("s06", 5)
	t.Logf("chance after 18 of 20 changed: %.3f; after 5 of 20: %.3f", most, quarter)
	require.Greater(t, most, 0.7)
	require.Less(t, quarter, 0.45)
	require.Greater(t, most, quarter+0.3)
}

// A Cluster function that puts every page in "" turns co-change off.
func TestCoChangeNoCluster(t *testing.T) {
	m := schedule.NewCoChange(func(string) string { return "" })
	coWorld(m, true, 30, 3)
	require.False(t, m.Learned())
}

// The builder learns from the pages' stored histories what the online
// model learned from every fetch as it happened.
func TestCoChangeBuilderLearnsFromHistories(t *testing.T) {
	online := schedule.NewCoChange(nil)
	pages := coWorld(online, true, 40, 4)
	var exposed int
	b := schedule.NewCoChangeBuilder(time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC), nil, func(string, schedule.Page, float64) { exposed++ })
	for _, u := range sortedKeys(pages) {
		b.Add(u, pages[u])
	}
	built := b.Model()
	require.True(t, built.Learned())
	require.Empty(t, built.Touched(), "history is not news")
	on, bu := online.Value("https://h/docs/s00/x"), built.Value("https://h/docs/s00/x")
	require.InDelta(t, on[3][1], bu[3][1], 0.15)
}

func sortedKeys(m map[string]schedule.Page) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func TestLastModVerdict(t *testing.T) {
	for _, tc := range []struct {
		name string
		t    schedule.LastModTrust
		want schedule.Verdict
	}{
		{"no evidence", schedule.LastModTrust{}, schedule.Sample},
		{"too little", schedule.LastModTrust{MovedSame: 7}, schedule.Sample},
		{"honest", schedule.LastModTrust{MovedChanged: 8, StillSame: 100}, schedule.Force},
		{"generated", schedule.LastModTrust{MovedSame: 8}, schedule.Rank},
		{"mostly lies", schedule.LastModTrust{MovedChanged: 2, MovedSame: 8}, schedule.Rank},
		{"half true", schedule.LastModTrust{MovedChanged: 5, MovedSame: 5}, schedule.Force},
		{"corrupt counts", schedule.LastModTrust{MovedChanged: -3, MovedSame: math.Inf(1)}, schedule.Sample},
	} {
		require.Equal(t, tc.want, tc.t.Verdict(schedule.DefaultLastModSample), tc.name)
	}
}

func ExampleCoChange() {
	m := schedule.NewCoChange(nil) // clusters by URL directory
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	// Every fetch is handed to Check; a crawler ranks with Chance.
	p := schedule.Page{LastFetched: t0, ChangeRate: 0.1}
	m.Check("https://docs.example.com/guide/install", p, schedule.Observation{At: t0.Add(24 * time.Hour), Changed: true})
	fmt.Println(m.Learned(), m.Chance("https://docs.example.com/guide/usage", p, t0.Add(25*time.Hour)))
	// Output: false 0
}

func ExampleCoChange_Discount() {
	m := schedule.NewCoChange(nil)
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	url := func(s, i int) string { return fmt.Sprintf("https://docs.example.com/s%d/p%02d", s, i) }
	pages := map[string]schedule.Page{}
	var before schedule.Page // a page as it was three days ago
	for day := range 60 {
		if day == 57 {
			before = pages[url(1, 0)]
		}
		// Every third day a release rewrites half of one of four sections
		// of 40 pages; each page is fetched daily.
		released := -1
		if day%3 == 0 {
			released = day / 3 % 4
		}
		for s := range 4 {
			for i := range 40 {
				u := url(s, i)
				p := pages[u]
				obs := schedule.Observation{At: t0.Add(time.Duration(day)*schedule.Day + time.Duration(1+s*40+i)*time.Minute), Changed: s == released && (i+day)%2 == 0}
				if p.LastFetched.IsZero() {
					obs.First, obs.Changed = true, false
				}
				m.Check(u, p, obs)
				pages[u] = schedule.Observe(p, obs)
			}
		}
	}
	// A page of a section whose siblings were all fetched unchanged since
	// its fetch three days ago is less likely to have changed than its
	// rate says; in the section released the day after, it is not.
	now := t0.Add(60 * schedule.Day)
	fmt.Printf("%v %.2f %.2f\n", m.Learned(), m.Discount(url(1, 0), before, now), m.Discount(url(3, 0), before, now))
	// Output: true 0.68 0.00
}
