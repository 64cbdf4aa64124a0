//go:build !linux

package peercred_test

import "errors"

func setNoNewPrivs() error { return errors.New("no_new_privs is Linux's") }
