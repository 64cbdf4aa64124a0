package gitsafe

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// DefaultLogCount is how many commits Log returns when LogOptions.Count is zero.
const DefaultLogCount = 20

// LogOptions selects the commits Log returns (git-log(1)).
type LogOptions struct {
	// Count is the most commits to return (DefaultLogCount when 0).
	Count int
	// Skip skips this many commits first.
	Skip int
	// Revisions are the revisions or ranges to walk ("main", "v1..HEAD"); HEAD when empty.
	Revisions []string
	// Paths limits the history to commits touching these pathspecs.
	Paths []string
}

// Person is an author or committer of a commit.
type Person struct {
	Name  string    `json:"name"`
	Email string    `json:"email"`
	Date  time.Time `json:"date"` // with the person's own UTC offset
}

// Commit is one commit of a log.
type Commit struct {
	Hash      string   `json:"hash"`
	Parents   []string `json:"parents"`
	Author    Person   `json:"author"`
	Committer Person   `json:"committer"`
	Subject   string   `json:"subject"`
	Body      string   `json:"body"`
}

// Log is a list of commits, newest first.
type Log struct {
	Commits   []Commit `json:"commits"`
	Truncated bool     `json:"truncated"` // the output cap cut the list short
}

// logFormat prints a commit's fields NUL-separated; with -z each commit ends in NUL.
const logFormat = "--format=%H%x00%P%x00%an%x00%ae%x00%aI%x00%cn%x00%ce%x00%cI%x00%s%x00%b"

const logFields = 10

// Log returns commits of `git log`, parsed. Errors: the Check's refusal, *ArgError,
// *GitError (e.g. an unknown revision).
func (r *Repo) Log(ctx context.Context, opts LogOptions) (*Log, error) {
	if opts.Count < 0 {
		return nil, &ArgError{What: "count", Value: strconv.Itoa(opts.Count), Why: "negative"}
	}
	if opts.Skip < 0 {
		return nil, &ArgError{What: "skip", Value: strconv.Itoa(opts.Skip), Why: "negative"}
	}
	if opts.Count == 0 {
		opts.Count = DefaultLogCount
	}
	for _, rev := range opts.Revisions {
		if err := checkRevision(rev); err != nil {
			return nil, err
		}
	}
	if err := checkPaths(opts.Paths); err != nil {
		return nil, err
	}
	args := []string{"log", "-z", logFormat, "--no-color", "--max-count=" + strconv.Itoa(opts.Count)}
	if opts.Skip > 0 {
		args = append(args, "--skip="+strconv.Itoa(opts.Skip))
	}
	args = append(args, "--end-of-options")
	args = append(args, opts.Revisions...)
	args = append(args, "--")
	args = append(args, opts.Paths...)
	out, err := r.run(ctx, nil, args)
	if err != nil {
		return nil, err
	}
	commits, complete, err := parseLog(out.stdout)
	if err != nil {
		return nil, err
	}
	return &Log{Commits: commits, Truncated: out.truncated || !complete}, nil
}

// parseLog parses logFormat -z output; complete is false when it ended inside a commit.
func parseLog(data []byte) (commits []Commit, complete bool, err error) {
	commits = []Commit{}
	fields := bytes.Split(data, []byte{0})
	fields = fields[:len(fields)-1] // after the final NUL, or the partial field
	for len(fields) >= logFields {
		f := fields[:logFields]
		fields = fields[logFields:]
		c := Commit{
			Hash:      string(f[0]),
			Parents:   strings.Fields(string(f[1])),
			Author:    person(f[2], f[3], f[4]),
			Committer: person(f[5], f[6], f[7]),
			Subject:   string(f[8]),
			Body:      strings.TrimRight(string(f[9]), "\n"),
		}
		if !isHex(c.Hash) {
			return nil, false, fmt.Errorf("git log: unexpected output (commit %q)", c.Hash)
		}
		if c.Parents == nil {
			c.Parents = []string{}
		}
		commits = append(commits, c)
	}
	return commits, len(fields) == 0, nil
}

func person(name, email, date []byte) Person {
	t, _ := time.Parse(time.RFC3339, string(date))
	return Person{Name: string(name), Email: string(email), Date: t}
}

// isHex reports whether s is a full object name (40 or 64 lower-case hex digits).
func isHex(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f') {
			return false
		}
	}
	return true
}
