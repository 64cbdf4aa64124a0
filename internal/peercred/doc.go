// Package peercred reads the credentials of the process at the other end of a Unix-domain
// socket (its uid, gid, groups and pid) from the kernel, never from anything the peer says.
package peercred
