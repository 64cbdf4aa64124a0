// Package helperwire converts the safety and permission types to and from the helper
// service's protobuf messages, in one place for the helpers and the client.
package helperwire
