// Package processesv1 is the generated Go code of the processes service (processes.proto):
// the wire between the s-code client and the user helper's host process supervisor.
// Regenerate with `make proto`.
package processesv1
