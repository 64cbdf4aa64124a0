package credhandle

import (
	"errors"
	"fmt"

	"github.com/zalando/go-keyring"
)

// DefaultKeyring reads an item of the system keyring: the Secret Service over the session
// D-Bus on Linux (attributes service and username), the login Keychain on macOS. A missing
// item is an error that says how to store it.
func DefaultKeyring(service, account string) (string, error) {
	v, err := keyring.Get(service, account)
	if errors.Is(err, keyring.ErrNotFound) {
		return "", fmt.Errorf("no keyring item for service %q account %q (store one with: secret-tool store --label=%s service %s username %s)", service, account, service, service, account)
	}
	if err != nil {
		return "", fmt.Errorf("keyring: %w", err)
	}
	return v, nil
}
