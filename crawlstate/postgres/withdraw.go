package postgres

import (
	"context"
	"fmt"
)

// Withdraw implements crawlstate.Sharer: one UPDATE that ends the offer
// and the lease of owner's rows among urls.
func (s *State) Withdraw(ctx context.Context, source, owner string, urls []string) error {
	const op = "withdraw"
	if err := check.Owner(op, source, owner); err != nil {
		return err
	}
	if len(urls) == 0 {
		return ctx.Err()
	}
	_, err := s.pool.Exec(ctx, s.q(`UPDATE {s}.pages SET offer_run = NULL, lease_owner = NULL, lease_expires = NULL
WHERE source = $1 AND lease_owner = $2 AND url = ANY($3::text[])`), source, owner, urls)
	if err != nil {
		return fmt.Errorf("crawlstate/postgres: %s of %q: %w", op, source, err)
	}
	return nil
}
