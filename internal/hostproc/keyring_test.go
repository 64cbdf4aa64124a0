package hostproc

import "github.com/zalando/go-keyring"

func keyringSet(service, account, value string) error { return keyring.Set(service, account, value) }
