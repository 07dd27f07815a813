// Package alert describes a page change as evidence an editor can check, and
// delivers it to sinks: JSON lines, a signed webhook, a Go function, or
// several of them at once.
//
// An Alert names the canonical URL, both content hashes, the chunks that were
// added, removed or changed (with their byte ranges and vector record IDs) and
// a unified diff of the changed text. Its ID is ID(url, oldHash, newHash), so
// the same change always carries the same ID.
//
// # Delivery contract
//
// The engine records every alert in its state before it calls Sink.Deliver
// and marks it delivered only after Deliver returned nil. Delivery is
// therefore at least once: when Deliver fails, or the process dies between
// the sink's acknowledgement and the engine's record of it, the same alert is
// delivered again later with the same ID. An alert marked delivered is never
// sent again.
//
// At-least-once delivery with stable IDs becomes exactly-once notification
// when the receiver deduplicates by ID: the JSON lines carry it as "id", the
// webhook sends it as the Idempotency-Key header and in the body. Sinks
// deduplicate themselves where they can (Multi skips sinks that already
// acknowledged an ID in this process); across processes only the receiver
// can.
package alert
