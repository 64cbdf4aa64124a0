// Package helperv1 is the generated Go code of the helper service (helper.proto): the wire
// between the s-code client and the user and root helpers. Regenerate with `make proto`.
package helperv1
