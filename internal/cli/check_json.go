package cli

import (
	"io"

	"github.com/s-code-dev/s-code/safety"
)

// verdictJSON has the shape of safety.Verdict's JSON ({"decision":…,"findings":[…]}); it
// exists so that writeJSON may leave <, > and & unescaped in commands (Verdict's
// MarshalJSON goes through json.Marshal, which writes them as \u003c, \u003e, \u0026).
// TestVerdictJSONShape keeps the two in step.
type verdictJSON struct {
	Decision safety.Decision  `json:"decision"`
	Findings []safety.Finding `json:"findings"`
}

// writeJSONLine writes v as one line of JSON to w (see writeJSON). A safety.Verdict is
// written in the shape of its MarshalJSON, with an empty findings array rather than null.
func writeJSONLine(w io.Writer, v any) error {
	if vd, ok := v.(safety.Verdict); ok {
		out := verdictJSON{Decision: vd.Decision, Findings: vd.Findings}
		if out.Findings == nil {
			out.Findings = []safety.Finding{}
		}
		v = out
	}
	return writeJSON(w, v)
}
