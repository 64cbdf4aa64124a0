package hostdef

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// ErrDeclined is returned by Confirm when the person does not confirm.
var ErrDeclined = errors.New("not confirmed by you")

// Confirm shows d's card on out and, unless yes (the --yes of automation), asks the person
// to type yes on in; anything else, or end of input, is ErrDeclined. On confirmation it
// stores the card's digest and the time in d (the caller saves the store).
func Confirm(d *Definition, home string, in io.Reader, out io.Writer, yes bool, now time.Time) error {
	if err := d.Validate(); err != nil {
		return err
	}
	c := d.Card(home)
	fmt.Fprint(out, c.Text())
	if !yes {
		fmt.Fprintf(out, "Run %s outside the sandbox with your authority? Type yes to confirm: ", d.Name)
		line, err := bufio.NewReader(in).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("confirmation: %w", err)
		}
		if strings.TrimSpace(line) != "yes" {
			fmt.Fprintln(out)
			return fmt.Errorf("host process %s: %w", d.Name, ErrDeclined)
		}
	}
	d.Confirmed, d.ConfirmedAt = c.Digest(), now.UTC().Truncate(time.Second)
	fmt.Fprintf(out, "confirmed %s (%s)\n", d.Name, d.Confirmed)
	return nil
}
