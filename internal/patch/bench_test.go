package patch

import (
	"encoding/json"
	"fmt"
	"testing"
)

// BenchmarkDecode decodes an envelope of 32 files x 100 line edits.
func BenchmarkDecode(b *testing.B) {
	type edit struct {
		StartLine int    `json:"start_line"`
		EndLine   int    `json:"end_line"`
		NewText   string `json:"new_text"`
	}
	type file struct {
		Path             string `json:"path"`
		ExpectedRevision string `json:"expected_revision"`
		Edits            []edit `json:"edits"`
	}
	var files []file
	for f := range MaxPaths {
		fl := file{Path: fmt.Sprintf("f%02d.txt", f), ExpectedRevision: "0123456789abcdef"}
		for k := range MaxEdits {
			fl.Edits = append(fl.Edits, edit{10*k + 5, 10*k + 5, fmt.Sprintf("file %d, line %d: changed\n", f, 10*k+5)})
		}
		files = append(files, fl)
	}
	req, err := json.Marshal(map[string]any{"files": files})
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(req)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(req); err != nil {
			b.Fatal(err)
		}
	}
}
