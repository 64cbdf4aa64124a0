// Package cli builds the s-code client's command tree (cobra) and maps its outcomes to exit
// statuses.
package cli
