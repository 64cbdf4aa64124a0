// Package helperclient is the client side of the helper service: it finds a helper's
// socket, checks that the right user serves it, and runs one command through it.
package helperclient
