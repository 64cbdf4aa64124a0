package redact

import (
	"strings"
	"testing"
)

// TestPendingSplitValue: a registered value cut into pieces at every offset is redacted
// whole when each piece is let out up to Pending.
func TestPendingSplitValue(t *testing.T) {
	const secret = "s3cr3t-VALUE-42"
	r, err := New([]string{secret, "other-secret"})
	if err != nil {
		t.Fatal(err)
	}
	text := "before " + secret + " middle s3cr3t-VAL after " + secret
	for cut := 0; cut <= len(text); cut++ {
		var out, pending strings.Builder
		for _, piece := range []string{text[:cut], text[cut:]} {
			pending.WriteString(piece)
			p := pending.String()
			hold := r.Pending(p)
			out.WriteString(r.String(p[:len(p)-hold]))
			pending.Reset()
			pending.WriteString(p[len(p)-hold:])
		}
		out.WriteString(r.String(pending.String()))
		got := out.String()
		if strings.Contains(got, secret) || strings.Count(got, MarkRegistered) != 2 || !strings.Contains(got, "middle s3cr3t-VAL after") {
			t.Fatalf("cut at %d: %q", cut, got)
		}
	}
	if n := r.Pending("abc s3cr3t"); n != len("s3cr3t") {
		t.Errorf("Pending = %d", n)
	}
	if n := r.Pending("no prefix here"); n != 0 {
		t.Errorf("Pending = %d", n)
	}
	var zero *Redactor
	if zero.Pending("x") != 0 {
		t.Error("nil Redactor holds text back")
	}
}
