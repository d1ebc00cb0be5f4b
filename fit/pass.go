package fit

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/ratelab/ratelab/trace"
)

// each reads src from its first row and calls visit with every row; errors name the source
// ("trace.csv: line 7: …"). ctx is checked every 16384 rows.
func each(ctx context.Context, src Source, visit func(row *trace.Row) error) error {
	rows, closer, err := src.Open()
	if err != nil {
		return err
	}
	defer closer.Close()
	var row trace.Row // one, reused: a row per iteration would escape to the heap
	for n := 1; ; n++ {
		var err error
		row, err = rows.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("%s: %w", src.Name(), err)
		}
		if err := visit(&row); err != nil {
			return err
		}
		if n&(1<<14-1) == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
	}
}
