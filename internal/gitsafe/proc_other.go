//go:build !unix

package gitsafe

import "os/exec"

func setProcessGroup(*exec.Cmd) error  { return ErrUnsupported }
func killProcessGroup(*exec.Cmd) error { return ErrUnsupported }
