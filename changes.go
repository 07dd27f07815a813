package recrawl

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
)

// Change is a stored alert, as Changes lists it: the alert as it was (or
// will be) delivered, with its evidence (both hashes, the changed chunks,
// the diff, the records written), and when the sink acknowledged it.
type Change struct {
	Alert Alert
	// Delivered is when the sink acknowledged the alert; zero while it
	// is pending.
	Delivered time.Time
}

// Changes lists the alerts of source made at or after since, oldest
// first: up to limit of them, and whether more follow (ask again from the
// last one's DetectedAt: the alerts made at that instant come again, with
// the same IDs). Alerts are stored only when Config.Alerts is set. It
// needs a State with crawlstate.AlertHistory (crawlstate/sqlite and
// crawlstate/memory have it); without, the error matches
// errors.ErrUnsupported. A limit below 1 is an error.
func (e *Engine) Changes(ctx context.Context, source string, since time.Time, limit int) ([]Change, bool, error) {
	if limit < 1 {
		return nil, false, fmt.Errorf("recrawl: changes of %s: limit %d; ask for at least 1", source, limit)
	}
	h, ok := e.cfg.State.(crawlstate.AlertHistory)
	if !ok {
		return nil, false, unsupported(e.cfg.State, "crawlstate.AlertHistory")
	}
	page, err := h.AlertsSince(ctx, source, since, "", limit+1)
	if err != nil {
		return nil, false, fmt.Errorf("recrawl: changes of %s since %s: %w", source, since.UTC().Format(time.RFC3339), err)
	}
	more := len(page) > limit
	out := make([]Change, 0, min(limit, len(page)))
	for _, sa := range page[:min(limit, len(page))] {
		var env envelope
		if err := json.Unmarshal(sa.Payload, &env); err != nil {
			return nil, false, fmt.Errorf("recrawl: changes of %s: stored alert %s unreadable: %w", source, sa.ID, err)
		}
		out = append(out, Change{Alert: env.Alert, Delivered: sa.DeliveredAt})
	}
	return out, more, nil
}
