package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/recrawl/recrawl"
	"github.com/recrawl/recrawl/clock"
)

// isTerminal reports whether f is a terminal (a character device), without
// a terminal library.
func isTerminal(f *os.File) bool {
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// progressWidth bounds the progress line, so it fits a narrow terminal
// without wrapping (a wrapped line cannot be redrawn with \r).
const progressWidth = 79

// progressEvery is the least time between two redraws.
const progressEvery = 100 * time.Millisecond

// progress draws one status line from observer events, redrawn in place
// with a carriage return: pages done of due, the rate, the elapsed time and
// the URL just finished.
type progress struct {
	w     io.Writer
	clk   clock.Clock
	start time.Time
	last  time.Time
	width int // of the line on screen
	line  string
}

func newProgress(w io.Writer, clk clock.Clock) *progress {
	return &progress{w: w, clk: clk, start: clk.Now()}
}

// event redraws the line, at most every progressEvery (and always for the
// last page of the due queue).
func (p *progress) event(ev recrawl.Event) {
	if ev.Due == 0 && ev.Done == 0 {
		return // a discovery skip: no page of the queue finished
	}
	now := p.clk.Now()
	elapsed := now.Sub(p.start)
	p.line = progressLine(ev, elapsed)
	if now.Sub(p.last) < progressEvery && ev.Done < ev.Due {
		return
	}
	p.last = now
	p.draw()
}

func (p *progress) draw() {
	pad := max(p.width-len(p.line), 0)
	fmt.Fprintf(p.w, "\r%s%s", p.line, strings.Repeat(" ", pad))
	p.width = len(p.line)
}

// finish draws the last state and ends the line.
func (p *progress) finish() {
	if p.line == "" {
		return
	}
	p.draw()
	fmt.Fprintln(p.w)
}

// progressLine formats one state: "[ 12/20]  3.1 pages/s  0:04  <url>",
// the URL cut from the left to fit progressWidth.
func progressLine(ev recrawl.Event, elapsed time.Duration) string {
	rate := 0.0
	if s := elapsed.Seconds(); s > 0 {
		rate = float64(ev.Done) / s
	}
	secs := int(elapsed.Round(time.Second) / time.Second)
	head := fmt.Sprintf("[%*d/%d] %5.1f pages/s %d:%02d ", len(fmt.Sprint(ev.Due)), ev.Done, ev.Due, rate, secs/60, secs%60)
	u := ev.URL
	if room := progressWidth - len(head); len(u) > room {
		if room < 4 {
			u = ""
		} else {
			u = "..." + u[len(u)-room+3:]
		}
	}
	return head + u
}
