package gitsafe

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Object types of git (gitglossary(7) "object type").
const (
	TypeCommit = "commit"
	TypeTree   = "tree"
	TypeBlob   = "blob"
	TypeTag    = "tag"
)

// ObjectError is an object name that does not name exactly one object.
type ObjectError struct {
	Name   string
	Reason string // "missing" or "ambiguous"
}

// Error names the object and whether it is missing or ambiguous.
func (e *ObjectError) Error() string { return fmt.Sprintf("object %q: %s", e.Name, e.Reason) }

// TreeEntry is one entry of a tree object.
type TreeEntry struct {
	Mode string `json:"mode"` // octal, e.g. "100644", "40000"
	Name string `json:"name"`
	OID  string `json:"oid"`
}

// Shown is what Show returns: a commit with its patch, or another object's contents.
type Shown struct {
	OID  string `json:"oid"`
	Type string `json:"type"` // one of the Type* constants
	// Commit and Diff are set for a commit: its metadata and its patch against its
	// parent (a combined diff for a merge).
	Commit *Commit `json:"commit,omitempty"`
	Diff   *Diff   `json:"diff,omitempty"`
	// Size, Content and Binary are set for a blob or tag: its size in bytes, its (capped)
	// contents, and whether they are not valid UTF-8 text or hold a NUL byte.
	Size    int64  `json:"size,omitempty"`
	Content string `json:"content,omitempty"`
	Binary  bool   `json:"binary,omitempty"`
	// Entries is set for a tree.
	Entries   []TreeEntry `json:"entries,omitempty"`
	Truncated bool        `json:"truncated"`
}

// Show returns the object a revision names: a commit (metadata and patch, like
// git-show(1)), or a blob, tree or tag such as "HEAD:README.md" or "v1.0:src". The name
// reaches git on standard input (git cat-file --batch), never as an argument. Errors: the
// Check's refusal, *ArgError, *ObjectError, *GitError.
func (r *Repo) Show(ctx context.Context, name string) (*Shown, error) {
	if err := checkRevision(name); err != nil {
		return nil, err
	}
	out, err := r.run(ctx, []byte(name+"\n"), []string{"cat-file", "--batch"})
	if err != nil {
		return nil, err
	}
	header, body, ok := bytes.Cut(out.stdout, []byte{'\n'})
	if !ok {
		return nil, fmt.Errorf("git cat-file: unexpected output %q", out.stdout)
	}
	f := strings.Fields(string(header))
	if len(f) == 2 && (f[1] == "missing" || f[1] == "ambiguous") {
		return nil, &ObjectError{Name: name, Reason: f[1]}
	}
	if len(f) != 3 || !isHex(f[0]) {
		return nil, fmt.Errorf("git cat-file: unexpected header %q", header)
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil {
		return nil, fmt.Errorf("git cat-file: bad size in %q: %w", header, err)
	}
	s := &Shown{OID: f[0], Type: f[1]}
	// The contents are followed by one '\n'; with the cap reached they are cut short.
	truncated := out.truncated || int64(len(body)) < size+1
	if int64(len(body)) > size {
		body = body[:size]
	}
	switch s.Type {
	case TypeCommit:
		return r.showCommit(ctx, s)
	case TypeTree:
		s.Entries, truncated = parseTree(body, len(s.OID)/2, truncated)
	default:
		s.Size = size
		s.Content = string(body)
		s.Binary = bytes.IndexByte(body, 0) >= 0 || !utf8.Valid(body) && !truncated
	}
	s.Truncated = truncated
	return s, nil
}

func (r *Repo) showCommit(ctx context.Context, s *Shown) (*Shown, error) {
	out, err := r.run(ctx, nil, []string{"log", "-z", logFormat, "--no-color", "--no-walk", "--end-of-options", s.OID, "--"})
	if err != nil {
		return nil, err
	}
	commits, _, err := parseLog(out.stdout)
	if err != nil {
		return nil, err
	}
	if len(commits) != 1 {
		return nil, fmt.Errorf("git log %s: expected one commit, got %d", s.OID, len(commits))
	}
	s.Commit = &commits[0]
	out, err = r.run(ctx, nil, []string{"show", "--no-color", "--format=", "--numstat", "--patch", "-z", "--end-of-options", s.OID, "--"})
	if err != nil {
		return nil, err
	}
	s.Diff = parseNumstatPatch(out.stdout, out.truncated)
	s.Truncated = s.Diff.Truncated
	return s, nil
}

// parseTree parses a raw tree object ("MODE NAME\0" and a binary object name per entry).
func parseTree(data []byte, hashLen int, truncated bool) ([]TreeEntry, bool) {
	entries := []TreeEntry{}
	for len(data) > 0 {
		sp := bytes.IndexByte(data, ' ')
		nul := bytes.IndexByte(data, 0)
		if sp < 0 || nul < sp || len(data) < nul+1+hashLen {
			return entries, true
		}
		entries = append(entries, TreeEntry{
			Mode: string(data[:sp]),
			Name: string(data[sp+1 : nul]),
			OID:  hex.EncodeToString(data[nul+1 : nul+1+hashLen]),
		})
		data = data[nul+1+hashLen:]
	}
	return entries, truncated
}
