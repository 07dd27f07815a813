package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/recrawl/recrawl/crawlstate"
	"github.com/recrawl/recrawl/crawlstate/internal/backend"
)

// pendingAlertsSQL reads the partial index alerts_pending: its WHERE
// clause must repeat the index's literally for SQLite to use it.
const pendingAlertsSQL = `
SELECT ` + backend.AlertColumns + ` FROM alerts
WHERE source = ? AND delivered_at = -9223372036854775808
ORDER BY created_at, id
LIMIT ?`

// PendingAlerts implements State: oldest first by CreatedAt, then ID. A
// limit below 1 is an error.
func (s *State) PendingAlerts(ctx context.Context, source string, limit int) ([]crawlstate.Alert, error) {
	const op = "pending alerts"
	if err := check.Limit(op, limit); err != nil {
		return nil, err
	}
	out, err := s.queryAlerts(ctx, pendingAlertsSQL, source, limit)
	if err != nil {
		return nil, fmt.Errorf("crawlstate: %s of source %q: %w", op, source, err)
	}
	return out, nil
}

// queryAlerts runs a query of alertColumns.
func (s *State) queryAlerts(ctx context.Context, query string, args ...any) ([]crawlstate.Alert, error) {
	rows, err := s.r.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []crawlstate.Alert
	for rows.Next() {
		a, err := backend.ScanAlert(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, rows.Err()
}

// Alert implements State.
func (s *State) Alert(ctx context.Context, id string) (crawlstate.Alert, error) {
	a, err := backend.ScanAlert(s.r.QueryRowContext(ctx, `SELECT `+backend.AlertColumns+` FROM alerts WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return crawlstate.Alert{}, fmt.Errorf("crawlstate: alert %q: %w", id, crawlstate.ErrNotFound)
	}
	if err != nil {
		return crawlstate.Alert{}, fmt.Errorf("crawlstate: alert %q: %w", id, err)
	}
	return a, nil
}

// MarkDelivered implements State: only a pending alert takes the time, so
// a second call keeps the first DeliveredAt. A zero at is an error (a zero
// DeliveredAt means pending).
func (s *State) MarkDelivered(ctx context.Context, id string, at time.Time) error {
	const op = "mark delivered"
	if err := check.Delivered(id, at); err != nil {
		return err
	}
	return s.updatePendingAlert(ctx, op, id,
		`UPDATE alerts SET delivered_at = ? WHERE id = ? AND delivered_at = -9223372036854775808`,
		backend.EncTime(at), id)
}

// MarkAlertFailed implements State. It also keeps at, for diagnosis.
func (s *State) MarkAlertFailed(ctx context.Context, id string, at time.Time, errMsg string) error {
	const op = "mark alert failed"
	return s.updatePendingAlert(ctx, op, id, `
UPDATE alerts SET attempts = attempts + 1, last_error = ?, last_attempt = ?
WHERE id = ? AND delivered_at = -9223372036854775808`,
		errMsg, backend.EncTime(at), id)
}

// updatePendingAlert runs an UPDATE of a pending alert. When it matched
// nothing, the alert is either delivered (nothing to do) or unknown
// (ErrNotFound).
func (s *State) updatePendingAlert(ctx context.Context, op, id, query string, args ...any) error {
	return s.withTx(ctx, op, func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, query, args...)
		if err != nil {
			return fmt.Errorf("crawlstate: %s %q: %w", op, id, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("crawlstate: %s %q: %w", op, id, err)
		}
		if n > 0 {
			return nil
		}
		var one int
		err = tx.QueryRowContext(ctx, `SELECT 1 FROM alerts WHERE id = ?`, id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return check.NoSuchAlert(op, id)
		}
		if err != nil {
			return fmt.Errorf("crawlstate: %s %q: %w", op, id, err)
		}
		return nil
	})
}

var _ crawlstate.AlertHistory = (*State)(nil)

// AlertsSince implements crawlstate.AlertHistory.
func (s *State) AlertsSince(ctx context.Context, source string, since time.Time, afterID string, limit int) ([]crawlstate.Alert, error) {
	const op = "alerts since"
	switch {
	case limit < 1:
		return nil, fmt.Errorf("crawlstate: %s: limit %d; pass a page size of at least 1", op, limit)
	case source == "":
		return nil, fmt.Errorf("crawlstate: %s: empty source", op)
	}
	at := backend.EncTime(since)
	out, err := s.queryAlerts(ctx, `
SELECT `+backend.AlertColumns+` FROM alerts
WHERE source = ? AND (created_at > ? OR created_at = ? AND id > ?)
ORDER BY created_at, id
LIMIT ?`, source, at, at, afterID, limit)
	if err != nil {
		return nil, fmt.Errorf("crawlstate: %s %s of source %q: %w", op, since.UTC().Format(time.RFC3339), source, err)
	}
	return out, nil
}
