package alert

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
)

// Sink delivers alerts to one destination.
//
// Deliver returns nil only when the destination acknowledged the alert; the
// engine then marks it delivered and never sends it again. An error means
// "not acknowledged": the engine keeps the alert pending and delivers the
// same alert, with the same ID, on a later attempt or run. An
// acknowledgement can be lost after the destination accepted the alert (a
// timeout while reading the answer, a crash before the engine records it),
// so a destination may see one ID more than once. Sinks pass the ID on so
// receivers can deduplicate by it, and deduplicate themselves where they
// can.
//
// Implementations are safe for concurrent use, honour ctx (a cancelled
// context ends Deliver promptly with an error wrapping ctx.Err()) and do not
// modify a.
type Sink interface {
	Deliver(ctx context.Context, a Alert) error
}

// Func adapts a function to a Sink: Deliver calls f, and f's result is the
// acknowledgement (nil) or its absence (an error). It is as safe for
// concurrent use as f is. A nil f makes every Deliver fail.
func Func(f func(ctx context.Context, a Alert) error) Sink { return funcSink(f) }

type funcSink func(ctx context.Context, a Alert) error

func (f funcSink) Deliver(ctx context.Context, a Alert) error {
	if f == nil {
		return errors.New("alert: Func sink with a nil function; pass the function that delivers")
	}
	return f(ctx, a)
}

// encode returns the alert's JSON without HTML escaping and without a
// trailing newline. The same alert always encodes to the same bytes.
func encode(a *Alert) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(a); err != nil {
		return nil, fmt.Errorf("alert: encode %s: %w", a.ID, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}

// JSONL returns a Sink that writes each alert as one JSON object on its own
// line to w (JSON Lines). Writes are serialized, so concurrent Deliver calls
// never interleave lines, and each line is passed to w in a single Write.
// Deliver returns nil once w accepted the whole line; whether that is
// durable depends on w (an *os.File may need Sync, a bufio.Writer Flush).
//
// A redelivered alert is written again with the same "id"; readers keep the
// first line per id. An alert that fails Validate is refused with an error
// wrapping ErrInvalid. When a write fails after part of a line went out,
// the next line starts with a newline so that it stays parseable; readers
// skip lines that are not valid JSON.
//
// A file a killed process left with a torn last line (no newline) is
// repaired the same way: before its first line, JSONL looks at the end of
// a w that is a file (an *os.File, or any writer with Stat and ReadAt);
// when the last byte is not a newline, the first line starts with one.
// When the end of a non-empty file cannot be read (a write-only file whose
// name no longer opens), the first line starts with a newline anyway: a
// blank line, which readers skip, rather than a line glued to a torn one.
func JSONL(w io.Writer) Sink {
	return &jsonlSink{w: w}
}

type jsonlSink struct {
	mu      sync.Mutex
	w       io.Writer
	partial bool // the last write stopped mid-line
	checked bool // the end of w was looked at
}

// statReader is a file whose end JSONL can read.
type statReader interface {
	Stat() (os.FileInfo, error)
	io.ReaderAt
}

// tornEnd reports whether w is a non-empty file that does not end with a
// newline (or whose end cannot be read).
func tornEnd(w io.Writer) bool {
	f, ok := w.(interface{ Stat() (os.FileInfo, error) })
	if !ok {
		return false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() || fi.Size() == 0 {
		return false
	}
	last := make([]byte, 1)
	if r, ok := w.(statReader); ok {
		if _, err := r.ReadAt(last, fi.Size()-1); err == nil {
			return last[0] != '\n'
		}
	}
	if n, ok := w.(interface{ Name() string }); ok {
		// Opened write-only (O_APPEND|O_WRONLY): read the end by name.
		if rf, err := os.Open(n.Name()); err == nil {
			defer rf.Close()
			if rfi, err := rf.Stat(); err == nil && os.SameFile(fi, rfi) {
				if _, err := rf.ReadAt(last, fi.Size()-1); err == nil {
					return last[0] != '\n'
				}
			}
		}
	}
	return true
}

func (s *jsonlSink) Deliver(ctx context.Context, a Alert) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("alert: jsonl: %w", err)
	}
	if s.w == nil {
		return errors.New("alert: JSONL sink with a nil writer; pass the io.Writer to append to")
	}
	if err := a.Validate(); err != nil {
		return err
	}
	body, err := encode(&a)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.checked {
		s.checked = true
		s.partial = s.partial || tornEnd(s.w)
	}
	line := make([]byte, 0, len(body)+2)
	if s.partial {
		line = append(line, '\n')
	}
	line = append(append(line, body...), '\n')
	n, err := s.w.Write(line)
	if err == nil && n < len(line) {
		err = io.ErrShortWrite
	}
	if err != nil {
		s.partial = n > 0 || s.partial
		return fmt.Errorf("alert: jsonl: write alert %s: %w", a.ID, err)
	}
	s.partial = false
	return nil
}

// multiMemory bounds how many partly acknowledged alerts a Multi remembers.
const multiMemory = 4096

// Multi returns a Sink that delivers each alert to all sinks concurrently.
// It acknowledges only when every sink acknowledged; otherwise it returns
// the failures joined (errors.Join, each naming the sink's position).
//
// A failure anywhere means the engine redelivers the alert to the Multi, so
// sinks that had acknowledged would see the same ID again. Multi remembers,
// in memory, which sinks acknowledged which ID and skips them on redelivery
// in the same process (the most recent 4096 partly delivered alerts). After
// a restart the redelivery reaches every sink again, which is why receivers
// deduplicate by ID (the id field, the webhook's Idempotency-Key).
//
// Multi with no sinks acknowledges every alert. It is safe for concurrent
// use when the sinks are.
func Multi(sinks ...Sink) Sink {
	return &multiSink{sinks: append([]Sink(nil), sinks...), acked: make(map[string]multiEntry)}
}

type multiSink struct {
	sinks []Sink

	mu    sync.Mutex
	acked map[string]multiEntry // partly delivered alerts by ID
	order []multiOrder          // insertion order of acked, for eviction
	seq   uint64
}

type multiEntry struct {
	done []bool // which sinks acknowledged
	seq  uint64
}

type multiOrder struct {
	id  string
	seq uint64
}

func (m *multiSink) Deliver(ctx context.Context, a Alert) error {
	m.mu.Lock()
	done := append([]bool(nil), m.acked[a.ID].done...)
	m.mu.Unlock()
	if done == nil {
		done = make([]bool, len(m.sinks))
	}

	errs := make([]error, len(m.sinks))
	var wg sync.WaitGroup
	for i, s := range m.sinks {
		if done[i] {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s == nil {
				errs[i] = errors.New("sink is nil")
				return
			}
			errs[i] = s.Deliver(ctx, a)
		}()
	}
	wg.Wait()

	var failed []error
	for i, err := range errs {
		if done[i] {
			continue
		}
		if err != nil {
			failed = append(failed, fmt.Errorf("alert: multi: sink %d of %d: %w", i+1, len(m.sinks), err))
			continue
		}
		done[i] = true
	}
	m.remember(a.ID, done, len(failed) == 0)
	return errors.Join(failed...)
}

// remember records which sinks acknowledged id. A fully delivered alert is
// forgotten: the engine never sends it again.
func (m *multiSink) remember(id string, done []bool, all bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, known := m.acked[id]
	if all {
		delete(m.acked, id)
		return
	}
	if known {
		e.done = done
		m.acked[id] = e
		return
	}
	m.seq++
	m.acked[id] = multiEntry{done: done, seq: m.seq}
	m.order = append(m.order, multiOrder{id, m.seq})
	for len(m.acked) > multiMemory {
		o := m.order[0]
		m.order = m.order[1:]
		if e, ok := m.acked[o.id]; ok && e.seq == o.seq {
			delete(m.acked, o.id)
		}
	}
	if len(m.order) > 2*multiMemory {
		kept := make([]multiOrder, 0, len(m.acked))
		for _, o := range m.order {
			if e, ok := m.acked[o.id]; ok && e.seq == o.seq {
				kept = append(kept, o)
			}
		}
		m.order = kept
	}
}
