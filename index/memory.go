package index

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"sync"
)

// Memory is an exact cosine index held in memory. Query scans every
// record (matching the filter first), keeping the top k in a heap, so its
// cost grows linearly with the number of records: about 30 ms of CPU per
// query for 100,000 vectors of 384 dimensions (BenchmarkMemoryQuery), less
// when a filter excludes most records.
//
// Vectors are stored unchanged (not normalized), beside their norms, in
// contiguous float32 blocks of memoryBlock records, so a growing index
// never copies its vectors; NewMemoryInt8 stores them as int8 instead, at
// a quarter of the memory. Metadata is stored compactly: the records that
// share a set of keys share one sorted key list and keep only their
// values. Texts are stored DEFLATE-compressed, against a dictionary of the
// first texts the index saw, when that saves at least an eighth (see
// textPacker), for a few microseconds per text returned.
//
// Built as the pipeline builds it for the bench site (265,000 records of
// 384 dimensions, 407 MB as raw float32; TestPeakHeapMemory), the process
// heap peaks at 549 MB with int8 vectors (1.35x the raw float32 vectors,
// within 1.3x + 100 MB) and at 985 MB with float32 ones (2.42x): the
// vectors are live heap, and the garbage collector lets the heap grow to
// about twice the live heap before it collects (GOGC=100), so every byte
// of vector costs up to two of peak.
//
// Memory is safe for concurrent use: queries run in parallel, writes
// exclusively. SaveFile and LoadFile persist it.
type Memory struct {
	mu   sync.RWMutex
	dims int // 0 until fixed by NewMemory or the first upsert
	q8   bool

	pos   map[string]int // ID -> slot
	ids   []string
	meta  []metadata
	texts []string // packed (textPacker)
	pack  textPacker
	// The vector of slot i is in block i/memoryBlock at offset
	// (i%memoryBlock)*dims: vecs for float32 storage, qvecs (times
	// scale[i]) for int8.
	vecs  [][]float32
	qvecs [][]int8
	scale []float32
	inv   []float32 // 1/‖v‖ of the stored vector, or 0 for a zero vector

	keySets map[string][]string // interned sorted key lists, by their joined keys

	// Filters are answered from postings: for each key a filter has used,
	// the IDs of the records holding each value, built by the first
	// filter on the key and kept up to date by every write, so a filter
	// on a page's URL costs its matches, not the size of the index.
	postings map[string]*posting
}

// memoryBlock is the number of records of one vector block.
const memoryBlock = 1024

// metadata is one record's metadata: values in the order of a shared,
// sorted key list.
type metadata struct {
	keys []string // shared, read only
	vals []string
}

var (
	_ Index  = (*Memory)(nil)
	_ Lister = (*Memory)(nil)
)

// NewMemory returns an empty index for vectors of dims dimensions. With
// dims <= 0 the first upserted record fixes the dimensions.
func NewMemory(dims int) *Memory {
	return &Memory{dims: max(dims, 0), pos: map[string]int{}, keySets: map[string][]string{}}
}

// NewMemoryInt8 returns an empty index that stores each vector quantised
// to int8 with a scale of its own (the largest magnitude maps to 127): a
// quarter of the vector memory of NewMemory. The price is precision: Query
// ranks by the cosine with the quantised vectors: on embedding-like
// vectors of 384 dimensions a score differs from the exact one by about
// 0.001 and recall@10 against exact search is 0.99 (TestMemoryInt8Recall
// pins at least 0.95); Get, Query and snapshots return the quantised
// vectors, dequantised. A snapshot of it loads (LoadFile) as a float32
// index.
func NewMemoryInt8(dims int) *Memory {
	m := NewMemory(dims)
	m.q8 = true
	return m
}

// Dimensions returns the vector length of the index, 0 while not yet fixed.
func (m *Memory) Dimensions() int {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.dims
}

// Upsert implements Index. Records are validated before any is stored: an
// empty ID or a non-finite value gives a *RecordError, a vector of the wrong
// length a *DimensionError. Within one call a later record with the same ID
// wins.
func (m *Memory) Upsert(ctx context.Context, records []Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	dims := m.dims
	for _, r := range records {
		if r.ID == "" {
			return &RecordError{Reason: "empty ID"}
		}
		if dims == 0 {
			if len(r.Vector) == 0 {
				return &RecordError{ID: r.ID, Reason: "empty vector"}
			}
			dims = len(r.Vector)
		}
		if len(r.Vector) != dims {
			return &DimensionError{ID: r.ID, Want: dims, Got: len(r.Vector)}
		}
		if !finite(r.Vector) {
			return &RecordError{ID: r.ID, Reason: "vector holds NaN or infinity"}
		}
	}
	m.dims = dims
	for _, r := range records {
		slot, ok := m.pos[r.ID]
		if !ok {
			slot = m.grow(r.ID)
		} else {
			m.unpost(slot)
		}
		m.meta[slot] = m.compact(r.Metadata)
		m.post(slot)
		// Packed, a copy: a chunk's text is usually a substring of its
		// page's Markdown, which would otherwise stay alive as a whole.
		m.texts[slot] = m.pack.pack(r.Text)
		m.setVector(slot, r.Vector)
	}
	return nil
}

// grow appends an empty slot for id and returns it.
func (m *Memory) grow(id string) int {
	slot := len(m.ids)
	m.pos[id] = slot
	m.ids = append(m.ids, id)
	m.meta = append(m.meta, metadata{})
	m.texts = append(m.texts, "")
	m.inv = append(m.inv, 0)
	if slot%memoryBlock == 0 {
		if m.q8 {
			m.qvecs = append(m.qvecs, make([]int8, memoryBlock*m.dims))
		} else {
			m.vecs = append(m.vecs, make([]float32, memoryBlock*m.dims))
		}
	}
	if m.q8 {
		m.scale = append(m.scale, 0)
	}
	return slot
}

// vec returns the float32 storage of slot.
func (m *Memory) vec(slot int) []float32 {
	off := (slot % memoryBlock) * m.dims
	return m.vecs[slot/memoryBlock][off : off+m.dims]
}

// qvec returns the int8 storage of slot.
func (m *Memory) qvec(slot int) []int8 {
	off := (slot % memoryBlock) * m.dims
	return m.qvecs[slot/memoryBlock][off : off+m.dims]
}

// setVector stores v in slot, with its norm.
func (m *Memory) setVector(slot int, v []float32) {
	if !m.q8 {
		copy(m.vec(slot), v)
		m.inv[slot] = invNorm(v)
		return
	}
	var peak float64
	for _, x := range v {
		peak = max(peak, math.Abs(float64(x)))
	}
	q := m.qvec(slot)
	if peak == 0 {
		clear(q)
		m.scale[slot], m.inv[slot] = 0, 0
		return
	}
	scale := peak / 127
	var norm float64
	for i, x := range v {
		n := int8(math.Round(float64(x) / scale))
		q[i] = n
		norm += float64(n) * float64(n)
	}
	m.scale[slot] = float32(scale)
	// The norm of the stored (dequantised) vector.
	m.inv[slot] = float32(1 / (math.Sqrt(norm) * scale))
}

// vector returns a copy of slot's vector (dequantised for int8 storage).
func (m *Memory) vector(slot int) []float32 {
	if !m.q8 {
		return slices.Clone(m.vec(slot))
	}
	q, scale := m.qvec(slot), m.scale[slot]
	out := make([]float32, len(q))
	for i, n := range q {
		out[i] = float32(n) * scale
	}
	return out
}

// compact returns md in the compact form, its key list interned.
func (m *Memory) compact(md map[string]string) metadata {
	if len(md) == 0 {
		return metadata{}
	}
	keys := slices.Sorted(maps.Keys(md))
	joined := strings.Join(keys, "\x00")
	shared, ok := m.keySets[joined]
	switch {
	case !ok:
		shared = keys
		m.keySets[joined] = shared
	case !slices.Equal(shared, keys): // keys holding NUL bytes joined alike
		shared = keys
	}
	vals := make([]string, len(shared))
	for i, k := range shared {
		vals[i] = md[k]
	}
	return metadata{keys: shared, vals: vals}
}

// get returns the value of key, as a map lookup would.
func (md metadata) get(key string) (string, bool) {
	for i, k := range md.keys {
		if k == key {
			return md.vals[i], true
		}
	}
	return "", false
}

// toMap returns md as a new map (nil for none).
func (md metadata) toMap() map[string]string {
	if len(md.keys) == 0 {
		return nil
	}
	out := make(map[string]string, len(md.keys))
	for i, k := range md.keys {
		out[k] = md.vals[i]
	}
	return out
}

// Delete implements Index.
func (m *Memory) Delete(ctx context.Context, ids []string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, id := range ids {
		if slot, ok := m.pos[id]; ok {
			m.removeSlot(slot)
		}
	}
	return nil
}

// DeleteWhere implements Index.
func (m *Memory) DeleteWhere(ctx context.Context, filter Filter) (int, error) {
	if len(filter) == 0 {
		return 0, ErrEmptyFilter
	}
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range filter {
		m.build(k)
	}
	match := compile(filter)
	// Every key of the filter has postings now.
	slots, _ := m.candidates(filter)
	var gone []int
	for _, s := range slots {
		if slot := int(s); match.match(m.meta[slot]) {
			gone = append(gone, slot)
		}
	}
	// Highest slot first: removeSlot moves the last record into the
	// freed slot, which must not be one still to remove.
	slices.SortFunc(gone, func(a, b int) int { return cmp.Compare(b, a) })
	for _, slot := range gone {
		m.removeSlot(slot)
	}
	return len(gone), nil
}

// build makes the postings of key, unless it has them (write lock held).
func (m *Memory) build(key string) {
	if _, ok := m.postings[key]; ok {
		return
	}
	if m.postings == nil {
		m.postings = map[string]*posting{}
	}
	p := &posting{byValue: map[string][]int32{}}
	for slot, md := range m.meta {
		if v, ok := md.get(key); ok {
			p.add(v, slot)
		}
	}
	m.postings[key] = p
}

// ensurePostings builds the postings of filter's keys that have none yet.
func (m *Memory) ensurePostings(filter Filter) {
	m.mu.RLock()
	missing := false
	for k := range filter {
		if _, ok := m.postings[k]; !ok {
			missing = true
			break
		}
	}
	m.mu.RUnlock()
	if !missing {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range filter {
		m.build(k)
	}
}

// posting lists the slots of the records holding each value of one key.
type posting struct {
	byValue map[string][]int32 // value -> slots
	idx     []int32            // slot -> its index in its value's list; -1 (or past the end): none
}

func (p *posting) add(v string, slot int) {
	for len(p.idx) <= slot {
		p.idx = append(p.idx, -1)
	}
	list := p.byValue[v]
	p.idx[slot] = int32(len(list))
	p.byValue[v] = append(list, int32(slot))
}

func (p *posting) remove(v string, slot int) {
	if slot >= len(p.idx) || p.idx[slot] < 0 {
		return
	}
	j := p.idx[slot]
	p.idx[slot] = -1
	list := p.byValue[v]
	last := int32(len(list) - 1)
	if j != last {
		moved := list[last]
		list[j] = moved
		p.idx[moved] = j
	}
	if last == 0 {
		delete(p.byValue, v)
	} else {
		p.byValue[v] = list[:last]
	}
}

// move records that the record of value v moved from slot from to to.
func (p *posting) move(v string, from, to int) {
	if from >= len(p.idx) || p.idx[from] < 0 {
		return
	}
	j := p.idx[from]
	p.idx[from] = -1
	p.byValue[v][j] = int32(to)
	for len(p.idx) <= to {
		p.idx = append(p.idx, -1)
	}
	p.idx[to] = j
}

// post adds the record in slot to the postings of its keys.
func (m *Memory) post(slot int) {
	md := m.meta[slot]
	for i, k := range md.keys {
		if p, ok := m.postings[k]; ok {
			p.add(md.vals[i], slot)
		}
	}
}

// unpost removes the record in slot from the postings of its keys.
func (m *Memory) unpost(slot int) {
	md := m.meta[slot]
	for i, k := range md.keys {
		if p, ok := m.postings[k]; ok {
			p.remove(md.vals[i], slot)
		}
	}
}

// moved updates the postings of the record that moved from slot from to
// slot to.
func (m *Memory) moved(from, to int) {
	md := m.meta[from]
	for i, k := range md.keys {
		if p, ok := m.postings[k]; ok {
			p.move(md.vals[i], from, to)
		}
	}
}

// candidates returns the slots that can match filter: the shortest posting
// list of its pairs. ok is false when no key of the filter has postings:
// every record is then a candidate (slots is nil).
func (m *Memory) candidates(filter Filter) (slots []int32, ok bool) {
	for k, v := range filter {
		p, has := m.postings[k]
		if !has {
			continue
		}
		if list := p.byValue[v]; !ok || len(list) < len(slots) {
			slots, ok = list, true
		}
	}
	return slots, ok
}

// removeSlot deletes a record by moving the last record into its slot.
func (m *Memory) removeSlot(slot int) {
	m.unpost(slot)
	last := len(m.ids) - 1
	delete(m.pos, m.ids[slot])
	if slot != last {
		m.moved(last, slot)
		m.ids[slot] = m.ids[last]
		m.meta[slot] = m.meta[last]
		m.texts[slot] = m.texts[last]
		m.inv[slot] = m.inv[last]
		if m.q8 {
			copy(m.qvec(slot), m.qvec(last))
			m.scale[slot] = m.scale[last]
		} else {
			copy(m.vec(slot), m.vec(last))
		}
		m.pos[m.ids[slot]] = slot
	}
	m.ids[last], m.meta[last], m.texts[last] = "", metadata{}, ""
	m.ids, m.meta, m.texts, m.inv = m.ids[:last], m.meta[:last], m.texts[:last], m.inv[:last]
	if m.q8 {
		m.scale = m.scale[:last]
	}
	if last%memoryBlock == 0 { // the last block is empty now: free it
		if m.q8 {
			m.qvecs[len(m.qvecs)-1] = nil
			m.qvecs = m.qvecs[:len(m.qvecs)-1]
		} else {
			m.vecs[len(m.vecs)-1] = nil
			m.vecs = m.vecs[:len(m.vecs)-1]
		}
	}
}

// Count implements Index.
func (m *Memory) Count(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	return len(m.ids), nil
}

// Get returns a copy of the record with this ID.
func (m *Memory) Get(ctx context.Context, id string) (Record, bool, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, false, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	slot, ok := m.pos[id]
	if !ok {
		return Record{}, false, nil
	}
	return m.record(slot), true, nil
}

// record returns a copy of the record in slot.
func (m *Memory) record(slot int) Record {
	return Record{
		ID:       m.ids[slot],
		Vector:   m.vector(slot),
		Metadata: m.meta[slot].toMap(),
		Text:     m.pack.unpack(m.texts[slot]),
	}
}

// pair is one condition of a compiled filter.
type pair struct{ key, value string }

// compile turns a filter into a matcher, which is cheaper to run per
// record than the map.
func compile(f Filter) *matcher {
	m := &matcher{pairs: make([]pair, 0, len(f))}
	for k, v := range f {
		m.pairs = append(m.pairs, pair{k, v})
	}
	m.pos = make([]int, len(m.pairs))
	return m
}

// matcher is Filter.Match for a compiled filter. Records share their key
// sets (see compact), so it finds the filter's keys once per key set, not
// once per record: a record is then matched by comparing its values.
type matcher struct {
	pairs    []pair
	keys     []string // the key set pos was resolved for
	resolved bool
	pos      []int // pairs[i].key's index in keys; -1: absent
}

// sameKeys reports whether a and b are the same shared slice.
func sameKeys(a, b []string) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// match reports whether md holds every pair of the filter.
func (mt *matcher) match(md metadata) bool {
	if len(mt.pairs) == 0 {
		return true
	}
	if !mt.resolved || !sameKeys(md.keys, mt.keys) {
		mt.keys, mt.resolved = md.keys, true
		for i, p := range mt.pairs {
			mt.pos[i] = slices.Index(md.keys, p.key)
		}
	}
	for i, p := range mt.pairs {
		j := mt.pos[i]
		if j < 0 || md.vals[j] != p.value {
			return false
		}
	}
	return true
}

// scored is a candidate in the top-k heap.
type scored struct {
	score float32
	slot  int
}

// IDs implements Lister: a filter costs its postings (the records
// holding its rarest pair), not the size of the index.
func (m *Memory) IDs(ctx context.Context, filter Filter, limit int) ([]string, error) {
	if limit < 0 {
		return nil, fmt.Errorf("index: limit is %d; ask for 0 or more IDs", limit)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.ensurePostings(filter)
	m.mu.RLock()
	defer m.mu.RUnlock()
	match := compile(filter)
	slots, indexed := m.candidates(filter)
	n := len(m.ids)
	if indexed {
		n = len(slots)
	}
	var out []string
	for i := range n {
		slot := i
		if indexed {
			slot = int(slots[i])
		}
		if match.match(m.meta[slot]) {
			out = append(out, m.ids[slot])
		}
	}
	slices.Sort(out)
	return out[:min(len(out), limit)], nil
}

// Query implements Index. A query vector of the wrong length gives a
// *DimensionError, a non-finite one a *RecordError, a negative k an error.
// Querying an index that never held a record returns no hits.
func (m *Memory) Query(ctx context.Context, vector []float32, k int, filter Filter) ([]Hit, error) {
	if k < 0 {
		return nil, fmt.Errorf("index: k is %d; ask for 0 or more hits", k)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if !finite(vector) {
		return nil, &RecordError{Reason: "query vector holds NaN or infinity"}
	}
	m.ensurePostings(filter)
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.dims == 0 {
		return nil, nil
	}
	if len(vector) != m.dims {
		return nil, &DimensionError{Want: m.dims, Got: len(vector)}
	}
	if k == 0 || len(m.ids) == 0 {
		return nil, nil
	}
	qinv := invNorm(vector)
	match := compile(filter)
	slots, indexed := m.candidates(filter)
	n := len(m.ids)
	if indexed {
		n = len(slots)
	}
	h := make([]scored, 0, min(k, n))
	for i := range n {
		if i&4095 == 4095 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		slot := i
		if indexed {
			slot = int(slots[i])
		}
		if !match.match(m.meta[slot]) {
			continue
		}
		var s float32
		if m.q8 {
			s = dotInt8(vector, m.qvec(slot)) * m.scale[slot] * m.inv[slot] * qinv
			if !(s >= -1 && s <= 1) {
				s = cosine64(vector, m.vector(slot))
			}
		} else {
			v := m.vec(slot)
			s = dot(vector, v) * m.inv[slot] * qinv
			if !(s >= -1 && s <= 1) { // rounding past ±1, or float32 overflow
				s = cosine64(vector, v)
			}
		}
		c := scored{score: s, slot: slot}
		if len(h) < k {
			h = append(h, c)
			m.up(h, len(h)-1)
		} else if m.worse(h[0], c) {
			h[0] = c
			m.down(h, 0)
		}
	}
	slices.SortFunc(h, func(a, b scored) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return cmp.Compare(m.ids[a.slot], m.ids[b.slot])
	})
	hits := make([]Hit, len(h))
	for i, c := range h {
		hits[i] = Hit{Record: m.record(c.slot), Score: c.score}
	}
	return hits, nil
}

// worse reports whether a ranks below b: a lower score, or an equal score
// and a greater ID. The heap keeps the worst candidate at its root.
func (m *Memory) worse(a, b scored) bool {
	if a.score != b.score {
		return a.score < b.score
	}
	return m.ids[a.slot] > m.ids[b.slot]
}

func (m *Memory) up(h []scored, i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !m.worse(h[i], h[p]) {
			return
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
}

func (m *Memory) down(h []scored, i int) {
	for {
		l := 2*i + 1
		if l >= len(h) {
			return
		}
		w := l
		if r := l + 1; r < len(h) && m.worse(h[r], h[l]) {
			w = r
		}
		if !m.worse(h[w], h[i]) {
			return
		}
		h[i], h[w] = h[w], h[i]
		i = w
	}
}

// dot is the inner product of two vectors of equal length, unrolled so the
// four sums proceed independently.
func dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i]*b[i] + a[i+4]*b[i+4]
		s1 += a[i+1]*b[i+1] + a[i+5]*b[i+5]
		s2 += a[i+2]*b[i+2] + a[i+6]*b[i+6]
		s3 += a[i+3]*b[i+3] + a[i+7]*b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return (s0 + s1) + (s2 + s3)
}

// dotInt8 is the inner product of a float32 and an int8 vector of equal
// length.
func dotInt8(a []float32, b []int8) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+4 <= len(a); i += 4 {
		s0 += a[i] * float32(b[i])
		s1 += a[i+1] * float32(b[i+1])
		s2 += a[i+2] * float32(b[i+2])
		s3 += a[i+3] * float32(b[i+3])
	}
	for ; i < len(a); i++ {
		s0 += a[i] * float32(b[i])
	}
	return (s0 + s1) + (s2 + s3)
}

// cosine64 is the cosine similarity computed in float64, clamped to
// [-1, 1]: the slow path for vectors whose float32 products overflow.
func cosine64(a, b []float32) float32 {
	var d, na, nb float64
	for i := range a {
		x, y := float64(a[i]), float64(b[i])
		d += x * y
		na += x * x
		nb += y * y
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return float32(max(-1, min(1, d/math.Sqrt(na)/math.Sqrt(nb))))
}

func invNorm(v []float32) float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	if s == 0 || math.IsInf(s, 0) {
		return 0
	}
	return float32(1 / math.Sqrt(s))
}

// finite reports whether v holds neither NaN nor an infinity (all exponent
// bits set, in IEEE 754 terms).
func finite(v []float32) bool {
	for _, x := range v {
		if math.Float32bits(x)&0x7f800000 == 0x7f800000 {
			return false
		}
	}
	return true
}
