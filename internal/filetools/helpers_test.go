package filetools

import "crypto/sha256"

func shaFull(b []byte) [32]byte { return sha256.Sum256(b) }
