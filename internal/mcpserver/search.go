package mcpserver

import (
	"math"
	"sort"
	"strings"
	"unicode"

	"github.com/s-code-dev/s-code/internal/tools"
)

// BM25 parameters (Robertson and Zaragoza, "The Probabilistic Relevance Framework: BM25
// and Beyond", 2009; the usual k1 and b).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// index ranks deferred tools by BM25 over the words of their names, descriptions and
// parameter names (a name's words count three times).
type index struct {
	tools []tools.Tool
	docs  [][]string     // the terms of each tool
	df    map[string]int // documents holding each term
	avgdl float64
}

type hit struct {
	tool  tools.Tool
	score float64
}

func newIndex(ts []tools.Tool) *index {
	ix := &index{tools: ts, df: map[string]int{}}
	total := 0
	for _, t := range ts {
		var terms []string
		name := terms3(words(t.Name()))
		terms = append(terms, name...)
		terms = append(terms, words(t.Description())...)
		if s := t.InputSchema(); s != nil {
			for p := range s.Properties {
				terms = append(terms, words(p)...)
			}
		}
		ix.docs = append(ix.docs, terms)
		total += len(terms)
		seen := map[string]bool{}
		for _, w := range terms {
			if !seen[w] {
				seen[w] = true
				ix.df[w]++
			}
		}
	}
	if len(ts) > 0 {
		ix.avgdl = float64(total) / float64(len(ts))
	}
	return ix
}

func terms3(ws []string) []string {
	out := make([]string, 0, 3*len(ws))
	for i := 0; i < 3; i++ {
		out = append(out, ws...)
	}
	return out
}

// words splits s into lower-case words at every non-letter, non-digit (so "audit_query"
// is "audit", "query"), with a plural "s" dropped.
func words(s string) []string {
	f := strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i, w := range f {
		if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			f[i] = w[:len(w)-1]
		}
	}
	return f
}

// find returns the tools matching q, best first: "select:A,B" names tools exactly (an
// unknown name is an error naming the known ones); otherwise BM25 ranks them and tools that
// share no word with q are left out.
func (ix *index) find(q string, maxN int) ([]hit, error) {
	if rest, ok := strings.CutPrefix(strings.TrimSpace(q), "select:"); ok {
		var out []hit
		for _, name := range strings.Split(rest, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				continue
			}
			found := false
			for _, t := range ix.tools {
				if t.Name() == name {
					out = append(out, hit{t, 1})
					found = true
				}
			}
			if !found {
				return nil, &tools.Error{Code: "unknown_tool", Message: "no deferred tool is named " + name + "; known: " + strings.Join(ix.names(), ", ")}
			}
		}
		return out, nil
	}
	qw := words(q)
	if len(qw) == 0 {
		return nil, &tools.Error{Code: "invalid_arguments", Message: "query is empty: describe the capability wanted, or use select:NAME"}
	}
	n := float64(len(ix.tools))
	var out []hit
	for i, doc := range ix.docs {
		tf := map[string]int{}
		for _, w := range doc {
			tf[w]++
		}
		score := 0.0
		for _, w := range qw {
			f := float64(tf[w])
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (n-float64(ix.df[w])+0.5)/(float64(ix.df[w])+0.5))
			score += idf * f * (bm25K1 + 1) / (f + bm25K1*(1-bm25B+bm25B*float64(len(doc))/ix.avgdl))
		}
		if score > 0 {
			out = append(out, hit{ix.tools[i], math.Round(score*1000) / 1000})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].score > out[j].score })
	if len(out) > maxN {
		out = out[:maxN]
	}
	return out, nil
}

func (ix *index) names() []string {
	var out []string
	for _, t := range ix.tools {
		out = append(out, t.Name())
	}
	return out
}
