// Package permission holds the permission model: modes, the plan of one operation and its
// digest, approvals with their single-use nonces, and Decide, which says whether a plan
// runs without a person, needs a person's approval, or is refused.
package permission
