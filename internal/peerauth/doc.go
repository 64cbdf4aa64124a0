// Package peerauth is the helpers' gRPC transport credentials: the handshake reads the
// caller's peer credentials from the kernel and puts them in every call's context.
package peerauth
