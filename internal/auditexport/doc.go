// Package auditexport sends every audit record to a fleet's pipeline as an OpenTelemetry log
// record over OTLP (gRPC or HTTP), asynchronously and bounded, so that the local log is never
// slowed or weakened by it.
package auditexport
