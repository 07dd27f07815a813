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
	rows, err := s.r.QueryContext(ctx, pendingAlertsSQL, source, limit)
	if err != nil {
		return nil, fmt.Errorf("crawlstate: %s of source %q: %w", op, source, err)
	}
	defer rows.Close()
	var out []crawlstate.Alert
	for rows.Next() {
		a, err := backend.ScanAlert(rows)
		if err != nil {
			return nil, fmt.Errorf("crawlstate: %s of source %q: %w", op, source, err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("crawlstate: %s of source %q: %w", op, source, err)
	}
	return out, nil
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
